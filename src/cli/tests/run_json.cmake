# CTest driver for `trnsim run KERNEL --json FILE` (registered in src/cli/CMakeLists.txt).
#
#   cmake -DTRNSIM=path/to/trnsim -DARGS="run|softmax|--lnc|2" -DJSON=out.json -DVERSION=0.1.0
#         -DKERNEL=softmax -DCORES=2 [-DRANKS=4] -P run_json.cmake
#
# The run must exit 0 and its JSON carry the whole result: the trnsim version, the kernel,
# its shape, dtype, chip and options, a passed check, the simulated time,
# the rates, what bounded it, the suggestions and one timing report per core (of rank 0).
# With RANKS: the rank count, one passed check per rank and the chip's timing of every core.
# The --trace written beside it shows every core of every rank.
include(${CMAKE_CURRENT_LIST_DIR}/cli_test_util.cmake)
cli_require(run_json.cmake TRNSIM ARGS JSON VERSION KERNEL CORES)
string(REPLACE "|" ";" args "${ARGS}")
file(REMOVE "${JSON}")
set(trace "${JSON}.trace.json")
file(REMOVE "${trace}")
cli_run(out ${args} --json "${JSON}" --trace "${trace}")
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
if(NOT DEFINED RANKS)
  set(RANKS 1)
endif()
expect_json("${RANKS}" run ranks)
if(RANKS GREATER 1)
  math(EXPR last "${RANKS} - 1")
  foreach(rank RANGE ${last})
    expect_json("ON" run rank_checks ${rank} ok)
  endforeach()
  math(EXPR all_cores "${RANKS} * ${CORES}")
  string(JSON timed LENGTH "${json}" run chip_timing cores)
  if(NOT timed EQUAL all_cores)
    message(FATAL_ERROR "chip_timing has ${timed} cores, expected ${all_cores}")
  endif()
endif()
# The trace shows every core of every rank, and no more.
file(READ "${trace}" trace_text)
math(EXPR last_core "${RANKS} * ${CORES} - 1")
math(EXPR beyond "${RANKS} * ${CORES}")
if(NOT trace_text MATCHES "\"name\":\"core ${last_core}\""
   OR trace_text MATCHES "\"name\":\"core ${beyond}\"")
  message(FATAL_ERROR "the trace does not show exactly cores 0 to ${last_core}")
endif()
string(JSON ns GET "${json}" run simulated_ns)
if(NOT ns MATCHES "^[1-9][0-9]*(\\.[0-9]+)?$")
  message(FATAL_ERROR "simulated_ns is '${ns}'")
endif()
message("--json carries the whole result (${cores} core(s), ${ns} ns)")
