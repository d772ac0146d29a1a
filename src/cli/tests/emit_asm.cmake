# CTest driver: `trnsim run KERNEL --emit asm` writes assembly that `trnsim run-asm` runs as
# written (registered in src/cli/CMakeLists.txt).
#
#   cmake -DTRNSIM=path/to/trnsim -DARGS="run|softmax|--shape|256x512" -DASM=out.s
#         -DRANDOM="a_t,b" -P emit_asm.cmake
#
# The emitted file declares its HBM tensors (.hbm), so run-asm needs nothing but data for
# the inputs (--random for each of RANDOM); its simulated time must equal the run's, which
# does not depend on the data.
include(${CMAKE_CURRENT_LIST_DIR}/cli_test_util.cmake)
cli_require(emit_asm.cmake TRNSIM ARGS ASM RANDOM)
string(REPLACE "|" ";" args "${ARGS}")

cli_run(run ${args} --emit asm --emit-file ${ASM})
if(NOT run MATCHES "simulated: ([0-9.]+) us")
  message(FATAL_ERROR "no simulated time in the run's report")
endif()
set(run_us ${CMAKE_MATCH_1})
file(STRINGS ${ASM} declarations REGEX "^\\.hbm ")
if(NOT declarations)
  message(FATAL_ERROR "${ASM} declares no HBM tensor")
endif()
set(fills "")
string(REPLACE "," ";" random "${RANDOM}")
foreach(name ${random})
  list(APPEND fills --random ${name})
endforeach()
cli_run(replay run-asm ${ASM} ${fills} --timing)
if(NOT replay MATCHES "timing \\([a-z0-9]+\\): total ([0-9.]+) us")
  message(FATAL_ERROR "no simulated time in run-asm's report")
endif()
if(NOT CMAKE_MATCH_1 STREQUAL run_us)
  message(FATAL_ERROR "run-asm simulated ${CMAKE_MATCH_1} us; the run ${run_us} us")
endif()
message("the emitted program runs as written: ${run_us} us both times")
