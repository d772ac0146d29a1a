# The installed package, tested as a user would use it (cmake/package.cmake's package test):
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK=... -DGENERATOR=Ninja -P package_test.cmake

# run(NAME EXPECT COMMAND...): runs COMMAND, fails unless it exits 0 with EXPECT (a regex)
# in its output.
function(run name expect)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT status EQUAL 0 OR NOT "${out}${err}" MATCHES "${expect}")
    message(FATAL_ERROR "${name} (exit ${status}): ${ARGN}\n${out}${err}")
  endif()
  message("${name}: ok")
endfunction()

file(REMOVE_RECURSE ${WORK})
set(prefix ${WORK}/prefix)
run("install" "" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(installed bin/trnsim include/trnsim/kernel/kernel.h include/trnsim/kernels/plugin.h
                  include/trnsim/util/diagnostic.h lib/cmake/trnsim/trnsimConfig.cmake)
  if(NOT EXISTS ${prefix}/${installed})
    message(FATAL_ERROR "the install has no ${installed}")
  endif()
endforeach()
run("installed CLI" "^trnsim [0-9.]+ " ${prefix}/bin/trnsim --version)

# A fresh project: the example directory, configured against the prefix only.
run("configure the example against the package" "" ${CMAKE_COMMAND}
    -S ${SOURCE_DIR}/examples/kernels -B ${WORK}/build -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix}
    "-DCMAKE_CXX_FLAGS=-Wall -Wextra -Wpedantic -Werror")
run("build the example" "" ${CMAKE_COMMAND} --build ${WORK}/build)
run("the example program" "max relative error .* \\(correct\\)" ${WORK}/build/gelu_bias 300 384)
run("the example kernel library in the installed CLI"
    "gelu_bias 300x384 bfloat16 on trn3 \\(1 core\\)\n  result: +correct"
    ${prefix}/bin/trnsim run --load ${WORK}/build/libgelu_bias_kernels.so gelu_bias
    --shape 300x384)

# The Python packages, when the build has them: the installed nki runs the example kernel.
if(DEFINED ENV{TRNSIM_TEST_PYTHON})
  set(ENV{PYTHONPATH} ${prefix}/lib/trnsim/python)
  set(ENV{PYTHONDONTWRITEBYTECODE} 1)
  run("the installed Python package" "bit-exact against NumPy"
      $ENV{TRNSIM_TEST_PYTHON} ${SOURCE_DIR}/examples/python/tensor_add.py)
  # The installed CLI finds the installed packages itself (no PYTHONPATH).
  unset(ENV{PYTHONPATH})
  run("a Python kernel file in the installed CLI" "tensor_add on trn3: simulated"
      ${prefix}/bin/trnsim run ${SOURCE_DIR}/examples/python/tensor_add.py:tensor_add
      --shape 256x64 --shape 256x64)
endif()
