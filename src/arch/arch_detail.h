// Internals of the chip configuration shared by its files (not part of arch/arch.h): the
// message helpers, the structure check and decoder that loading needs, and the TensorE rate
// of a peak mode. arch.cpp: names, helpers and derived figures; arch_decode.cpp: JSON to
// ChipConfig; arch_encode.cpp: ChipConfig to JSON; arch_validate.cpp: validate();
// arch_load.cpp: JSON text, files and presets.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arch/arch.h"
#include "arch/config_json.h"

namespace trnsim::arch::config_detail {

using nlohmann::json;

// The TensorE rate parameter of a peak mode (peak_modes()), or nullptr for another name.
const Param* rate_for_mode(const ChipConfig& c, const std::string& mode);

// arch_decode.cpp
// Rejects unknown fields and non-object sections before anything is decoded. A patch (a
// user file with "base") may also hold nulls, which delete what the preset had.
void check_structure(const json& object, const std::string& prefix, bool is_patch);
// Decodes a whole config (structure check, fields, validate()). Values without provenance get
// `default_source`; with `require_provenance` (presets) they are an error instead.
ChipConfig decode(const json& root, const std::string& default_source, bool require_provenance);

}  // namespace trnsim::arch::config_detail
