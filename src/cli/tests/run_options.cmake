# CTest driver for `trnsim run KERNEL --set key=value` (registered in src/cli/CMakeLists.txt).
#
#   cmake -DTRNSIM=path/to/trnsim -DARGS="run|matmul|--shape|512x1024x512"
#         -DSET="block_m=1,block_n=1" [-DLABEL=regex] -P run_options.cmake
#   cmake -DTRNSIM=path/to/trnsim -DARGS="run|matmul|--set|block_k=1" -DEXPECT_ERROR=regex
#         -P run_options.cmake
#
# ARGS are the command's arguments separated by '|'. With SET the command runs twice, as given
# (the defaults) and with `--set SET` (tuned): both must exit 0 with a correct result, the
# tuned run's first line must match LABEL (when given), and the two runs must differ in
# simulated time or in compiled instructions. With EXPECT_ERROR the command must fail, print
# a message matching the regex on stderr and simulate nothing.
foreach(var TRNSIM ARGS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_options.cmake needs -D${var}=...")
  endif()
endforeach()
string(REPLACE "|" ";" args "${ARGS}")

if(DEFINED EXPECT_ERROR)
  execute_process(COMMAND "${TRNSIM}" ${args} RESULT_VARIABLE code OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  message("${out}")
  if(code EQUAL 0)
    message(FATAL_ERROR "expected the command to fail; it exited with 0")
  endif()
  if(NOT err MATCHES "${EXPECT_ERROR}")
    message(FATAL_ERROR "stderr does not match '${EXPECT_ERROR}':\n${err}")
  endif()
  if(out MATCHES "simulated:")
    message(FATAL_ERROR "a run was simulated before the bad option was reported")
  endif()
  message("failed as expected: ${err}")
  return()
endif()

if(NOT DEFINED SET)
  message(FATAL_ERROR "run_options.cmake needs -DSET=... or -DEXPECT_ERROR=...")
endif()

# Runs the command (with `extra` appended) and sets <prefix>_ns, <prefix>_instructions and
# <prefix>_label from its report.
function(run_once prefix)
  execute_process(COMMAND "${TRNSIM}" ${args} ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  message("${out}")
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "trnsim ${ARGN} exited with ${code}:\n${err}")
  endif()
  if(NOT out MATCHES "result: +correct")
    message(FATAL_ERROR "trnsim ${ARGN}: the result is not reported correct")
  endif()
  if(NOT out MATCHES "simulated: ([0-9.]+) us")
    message(FATAL_ERROR "trnsim ${ARGN}: no simulated time")
  endif()
  set(${prefix}_ns "${CMAKE_MATCH_1}" PARENT_SCOPE)
  if(NOT out MATCHES "compiled: +([0-9]+) instructions")
    message(FATAL_ERROR "trnsim ${ARGN}: no instruction count")
  endif()
  set(${prefix}_instructions "${CMAKE_MATCH_1}" PARENT_SCOPE)
  string(REGEX MATCH "^[^\n]*" first_line "${out}")
  set(${prefix}_label "${first_line}" PARENT_SCOPE)
endfunction()

run_once(default)
run_once(tuned --set "${SET}")
if(DEFINED LABEL AND NOT tuned_label MATCHES "${LABEL}")
  message(FATAL_ERROR "the tuned run is reported as '${tuned_label}', expected a match of '${LABEL}'")
endif()
if(default_ns STREQUAL tuned_ns AND default_instructions STREQUAL tuned_instructions)
  message(FATAL_ERROR "--set ${SET} changed neither the simulated time (${default_ns} us) nor "
                      "the instructions (${default_instructions})")
endif()
message("default: ${default_ns} us, ${default_instructions} instructions; --set ${SET}: "
        "${tuned_ns} us, ${tuned_instructions} instructions (both correct)")
