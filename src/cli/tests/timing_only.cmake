# CTest driver for `trnsim run KERNEL --timing-only [--no-hazards]` (registered in
# src/cli/CMakeLists.txt).
#
#   cmake -DTRNSIM=path/to/trnsim -DARGS="run|matmul|--shape|512x1024x512" -P timing_only.cmake
#
# Runs the kernel three times: functionally, timing only, and timing only without the race
# detector. The timing-only runs must say that they computed nothing, and all three must
# report the same simulated time and instruction count (the data and the detector do not
# change the time).
foreach(var TRNSIM ARGS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "timing_only.cmake needs -D${var}=...")
  endif()
endforeach()
string(REPLACE "|" ";" args "${ARGS}")

function(run_once prefix expect_result)
  execute_process(COMMAND "${TRNSIM}" ${args} ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  message("${out}")
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "trnsim ${ARGN} exited with ${code}:\n${err}")
  endif()
  if(NOT out MATCHES "result: +${expect_result}")
    message(FATAL_ERROR "trnsim ${ARGN}: the result line does not say '${expect_result}'")
  endif()
  if(NOT out MATCHES "simulated: ([0-9.]+) us")
    message(FATAL_ERROR "trnsim ${ARGN}: no simulated time")
  endif()
  set(${prefix}_ns "${CMAKE_MATCH_1}" PARENT_SCOPE)
  if(NOT out MATCHES "compiled: +([0-9]+) instructions")
    message(FATAL_ERROR "trnsim ${ARGN}: no instruction count")
  endif()
  set(${prefix}_instructions "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()

run_once(functional "correct")
run_once(timed "not computed \\(timing only\\)" --timing-only)
run_once(fast "not computed \\(timing only\\)" --timing-only --no-hazards)
foreach(run timed fast)
  if(NOT "${${run}_ns}" STREQUAL "${functional_ns}" OR
     NOT "${${run}_instructions}" STREQUAL "${functional_instructions}")
    message(FATAL_ERROR "${run}: ${${run}_ns} us / ${${run}_instructions} instructions, but the "
                        "functional run: ${functional_ns} us / ${functional_instructions}")
  endif()
endforeach()
message("same time in all three runs: ${functional_ns} us, ${functional_instructions} instructions")
