// The preset JSON files, compiled into the library by embed_presets.cmake (internal header).
#pragma once

#include <cstddef>

namespace trnsim::arch::detail {

struct EmbeddedPreset {
  const char* name;  // file stem: "trn3" for presets/trn3.json
  const char* json;  // the file's text, byte for byte
};

extern const EmbeddedPreset kEmbeddedPresets[];
extern const std::size_t kEmbeddedPresetCount;

}  // namespace trnsim::arch::detail
