# CTest driver for `trnsim run KERNEL --json FILE` (registered in src/cli/CMakeLists.txt).
#
#   cmake -DTRNSIM=path/to/trnsim -DARGS="run|softmax|--lnc|2" -DJSON=out.json -DVERSION=0.1.0
#         -DKERNEL=softmax -DCORES=2 -P run_json.cmake
#
# The run must exit 0 and its JSON carry the whole result: the trnsim version, the kernel,
# its shape, dtype, chip and options, a passed check, the simulated time,
# the rates, what bounded it, the suggestions and one timing report per core.
include(${CMAKE_CURRENT_LIST_DIR}/cli_test_util.cmake)
cli_require(run_json.cmake TRNSIM ARGS JSON VERSION KERNEL CORES)
string(REPLACE "|" ";" args "${ARGS}")
file(REMOVE "${JSON}")
cli_run(out ${args} --json "${JSON}")
file(READ "${JSON}" json)

function(expect_json want)
  string(JSON got ERROR_VARIABLE error GET "${json}" ${ARGN})
  if(error)
    message(FATAL_ERROR "${ARGN}: ${error}")
  endif()
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "${ARGN} is '${got}', expected '${want}'")
  endif()
endfunction()
function(expect_member)
  string(JSON type ERROR_VARIABLE error TYPE "${json}" ${ARGN})
  if(error)
    message(FATAL_ERROR "the JSON lacks ${ARGN}: ${error}")
  endif()
endfunction()

expect_json("${VERSION}" trnsim version)
expect_json("${KERNEL}" run kernel)
expect_json("${CORES}" run lnc)
expect_json("ON" run check ok)
expect_json("OFF" run timing_only)
foreach(member shape dtype chip options mfu_percent mbu_percent bound_by suggestions compiled
       host_seconds)
  expect_member(run ${member})
endforeach()
string(JSON cores LENGTH "${json}" run cores)
if(NOT cores EQUAL CORES)
  message(FATAL_ERROR "${cores} timing reports for ${CORES} cores")
endif()
string(JSON ns GET "${json}" run simulated_ns)
if(NOT ns MATCHES "^[1-9][0-9]*(\\.[0-9]+)?$")
  message(FATAL_ERROR "simulated_ns is '${ns}'")
endif()
message("--json carries the whole result (${cores} core(s), ${ns} ns)")
