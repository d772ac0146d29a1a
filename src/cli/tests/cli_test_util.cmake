# What the CLI's CTest drivers (run_options.cmake, timing_only.cmake, profile_compare.cmake)
# share: included by them in script mode (cmake -P).

# Fails unless every named variable was given with -D<var>=... (`script` names the driver).
function(cli_require script)
  foreach(var ${ARGN})
    if(NOT DEFINED ${var})
      message(FATAL_ERROR "${script} needs -D${var}=...")
    endif()
  endforeach()
endfunction()

# Runs `trnsim ARGN`, which must fail before simulating anything (`what` names the bad input
# in the message) with a message on stderr that matches `expect`.
function(cli_expect_failure expect what)
  execute_process(COMMAND "${TRNSIM}" ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  message("${out}")
  if(code EQUAL 0)
    message(FATAL_ERROR "expected the command to fail; it exited with 0")
  endif()
  if(NOT err MATCHES "${expect}")
    message(FATAL_ERROR "stderr does not match '${expect}':\n${err}")
  endif()
  if(out MATCHES "simulated:")
    message(FATAL_ERROR "a run was simulated before the ${what} was reported")
  endif()
  message("failed as expected: ${err}")
endfunction()

# Runs `trnsim ARGN`, which must exit 0; echoes its stdout and sets <out_var> to it.
function(cli_run out_var)
  execute_process(COMMAND "${TRNSIM}" ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  message("${out}")
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "trnsim ${ARGN} exited with ${code}:\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

# Runs `trnsim ${args} ARGN` (`args` from the caller), which must exit 0 with a result line
# matching `expect_result`, and sets <prefix>_ns (simulated us), <prefix>_instructions
# (compiled) and <prefix>_label (the first line of its report) in the caller.
function(cli_run_report prefix expect_result)
  cli_run(out ${args} ${ARGN})
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
  string(REGEX MATCH "^[^\n]*" first_line "${out}")
  set(${prefix}_label "${first_line}" PARENT_SCOPE)
endfunction()
