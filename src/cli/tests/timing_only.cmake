# CTest driver for `trnsim run KERNEL --timing-only [--no-hazards]` (registered in
# src/cli/CMakeLists.txt).
#
#   cmake -DTRNSIM=path/to/trnsim -DARGS="run|matmul|--shape|512x1024x512" -P timing_only.cmake
#
# Runs the kernel three times: functionally, timing only, and timing only without the race
# detector. The timing-only runs must say that they computed nothing, and all three must
# report the same simulated time and instruction count (the data and the detector do not
# change the time).
include(${CMAKE_CURRENT_LIST_DIR}/cli_test_util.cmake)
cli_require(timing_only.cmake TRNSIM ARGS)
string(REPLACE "|" ";" args "${ARGS}")

cli_run_report(functional "correct")
cli_run_report(timed "not computed \\(timing only\\)" --timing-only)
cli_run_report(fast "not computed \\(timing only\\)" --timing-only --no-hazards)
foreach(run timed fast)
  if(NOT "${${run}_ns}" STREQUAL "${functional_ns}" OR
     NOT "${${run}_instructions}" STREQUAL "${functional_instructions}")
    message(FATAL_ERROR "${run}: ${${run}_ns} us / ${${run}_instructions} instructions, but the "
                        "functional run: ${functional_ns} us / ${functional_instructions}")
  endif()
endforeach()
message("same time in all three runs: ${functional_ns} us, ${functional_instructions} instructions")
