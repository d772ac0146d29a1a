# CTest driver for the progress line (src/cli/progress_line.h): on a terminal (`script`
# gives the command one) it is drawn on stderr and erased before the report; in a pipe
# nothing is drawn. TRNSIM_PROGRESS_DELAY_MS=0 draws it at once instead of after 2 s.
#
#   cmake -DTRNSIM=path/to/trnsim -DSCRIPT=/usr/bin/script -P progress.cmake
include(${CMAKE_CURRENT_LIST_DIR}/cli_test_util.cmake)
cli_require(progress.cmake TRNSIM SCRIPT)
set(ENV{TRNSIM_PROGRESS_DELAY_MS} 0)
set(command "${TRNSIM} run softmax --shape 1024x512")

execute_process(COMMAND ${SCRIPT} -qec "${command}" /dev/null RESULT_VARIABLE code
                OUTPUT_VARIABLE terminal)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "on a terminal: exit ${code}\n${terminal}")
endif()
string(ASCII 27 escape)
if(NOT terminal MATCHES "\rtrnsim: [a-z ,0-9()%]+, [0-9]+\\.[0-9] s${escape}\\[K")
  message(FATAL_ERROR "no progress line on the terminal:\n${terminal}")
endif()
if(NOT terminal MATCHES "\r${escape}\\[Ksoftmax 1024x512 bfloat16 on trn3")
  message(FATAL_ERROR "the progress line is not erased before the report:\n${terminal}")
endif()

separate_arguments(piped UNIX_COMMAND "${command}")
execute_process(COMMAND ${piped} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0 OR err MATCHES "trnsim: ")
  message(FATAL_ERROR "in a pipe: exit ${code}, stderr:\n${err}")
endif()
message("progress drawn and erased on a terminal, absent in a pipe")
