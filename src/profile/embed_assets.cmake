# Turns the explorer's CSS and JavaScript into one C++ source: each file becomes an array of
# raw string literals of at most 16 KiB (ISO C++ only guarantees 64 K characters per literal),
# so the report writer needs no files at run time.
# Usage: cmake -DOUTPUT=<file.cpp> -DJS=<explorer.js> -DCSS=<explorer.css> -P embed_assets.cmake
set(delimiter "trnsim_asset")
set(chunk 16000)
set(body "")
foreach(pair "kExplorerJs=${JS}" "kExplorerCss=${CSS}")
  string(FIND "${pair}" "=" eq)
  string(SUBSTRING "${pair}" 0 ${eq} name)
  math(EXPR from "${eq} + 1")
  string(SUBSTRING "${pair}" ${from} -1 path)
  file(READ "${path}" text)
  string(FIND "${text}" ")${delimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${path} contains the raw-string delimiter")
  endif()
  string(LENGTH "${text}" length)
  string(APPEND body "const std::string_view ${name}[] = {\n")
  set(pos 0)
  while(pos LESS length)
    string(SUBSTRING "${text}" ${pos} ${chunk} piece)
    string(APPEND body "    R\"${delimiter}(${piece})${delimiter}\",\n")
    math(EXPR pos "${pos} + ${chunk}")
  endwhile()
  string(APPEND body "};\nconst std::size_t ${name}Count = sizeof(${name}) / sizeof(${name}[0]);\n\n")
endforeach()
file(WRITE "${OUTPUT}.tmp"
"// Generated from src/profile/assets by src/profile/embed_assets.cmake: do not edit.
#include \"profile/assets.h\"

namespace trnsim::profile::assets {

${body}}  // namespace trnsim::profile::assets
")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
