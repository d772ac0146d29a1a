# Turns the preset JSON files into one C++ source with a raw string literal per preset, so the
# binary carries the presets without needing the source tree at run time.
# Usage: cmake -DOUTPUT=<file.cpp> -DPRESET_DIR=<dir> -DPRESETS=trn1,trn2 [-DLAYER=arch]
#        -P embed_presets.cmake
# LAYER (arch by default) names the layer whose <layer>/embedded_presets.h declares the table,
# in namespace trnsim::<layer>::detail. The system layer embeds its presets the same way.
if(NOT LAYER)
  set(LAYER arch)
endif()
string(REPLACE "," ";" preset_list "${PRESETS}")
set(delimiter "trnsim_preset")
set(body "")
foreach(preset IN LISTS preset_list)
  set(path "${PRESET_DIR}/${preset}.json")
  file(READ "${path}" text)
  string(FIND "${text}" ")${delimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${path} contains the raw-string delimiter ')${delimiter}\"'")
  endif()
  string(APPEND body "    {\"${preset}\", R\"${delimiter}(${text})${delimiter}\"},\n")
endforeach()
file(WRITE "${OUTPUT}.tmp"
"// Generated from src/${LAYER}/presets/*.json by src/arch/embed_presets.cmake: do not edit.
#include \"${LAYER}/embedded_presets.h\"

namespace trnsim::${LAYER}::detail {

const EmbeddedPreset kEmbeddedPresets[] = {
${body}};
const std::size_t kEmbeddedPresetCount = sizeof(kEmbeddedPresets) / sizeof(kEmbeddedPresets[0]);

}  // namespace trnsim::${LAYER}::detail
")
# Replace only on change so an unrelated re-run does not force a recompile.
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
