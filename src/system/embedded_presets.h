// The system preset JSON files, compiled into the library by src/arch/embed_presets.cmake
// (internal header).
#pragma once

#include <cstddef>

#include "arch/embedded_presets.h"

namespace trnsim::system::detail {

using arch::detail::EmbeddedPreset;

extern const EmbeddedPreset kEmbeddedPresets[];
extern const std::size_t kEmbeddedPresetCount;

}  // namespace trnsim::system::detail
