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
include(${CMAKE_CURRENT_LIST_DIR}/cli_test_util.cmake)
cli_require(run_options.cmake TRNSIM ARGS)
string(REPLACE "|" ";" args "${ARGS}")

if(DEFINED EXPECT_ERROR)
  cli_expect_failure("${EXPECT_ERROR}" "bad option" ${args})
  return()
endif()

if(NOT DEFINED SET)
  message(FATAL_ERROR "run_options.cmake needs -DSET=... or -DEXPECT_ERROR=...")
endif()

cli_run_report(default "correct")
cli_run_report(tuned "correct" --set "${SET}")
if(DEFINED LABEL AND NOT tuned_label MATCHES "${LABEL}")
  message(FATAL_ERROR "the tuned run is reported as '${tuned_label}', expected a match of '${LABEL}'")
endif()
if(default_ns STREQUAL tuned_ns AND default_instructions STREQUAL tuned_instructions)
  message(FATAL_ERROR "--set ${SET} changed neither the simulated time (${default_ns} us) nor "
                      "the instructions (${default_instructions})")
endif()
message("default: ${default_ns} us, ${default_instructions} instructions; --set ${SET}: "
        "${tuned_ns} us, ${tuned_instructions} instructions (both correct)")
