# Shared build settings for every trnsim target.
add_library(trnsim_options INTERFACE)
target_compile_options(trnsim_options INTERFACE -Wall -Wextra -Wpedantic -Wshadow
  -Wconversion -Wno-sign-conversion -Wnon-virtual-dtor -Wold-style-cast
  # The kernel API's option structs are meant to be filled with designated initializers
  # naming only what differs from the defaults ({.accumulate = true}).
  -Wno-missing-field-initializers)
if(TRNSIM_WERROR)
  target_compile_options(trnsim_options INTERFACE -Werror)
endif()
if((CMAKE_BUILD_TYPE STREQUAL "Release" OR CMAKE_BUILD_TYPE STREQUAL "RelWithDebInfo")
   AND NOT TRNSIM_SANITIZE)
  # The simulator's hot loops are written to be auto-vectorised; let the compiler use the
  # host's vector units only when asked (portable binaries by default, x86-64-v2 baseline).
  # Not in sanitizer builds: they are for finding bugs, and -O3 doubled their build time.
  target_compile_options(trnsim_options INTERFACE -O3)
endif()
if(TRNSIM_SANITIZE)
  target_compile_options(trnsim_options INTERFACE -fsanitize=address,undefined
    -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_link_options(trnsim_options INTERFACE -fsanitize=address,undefined)
endif()

include(GoogleTest)

# trnsim_add_test(NAME SOURCES... LIBS ...): one GoogleTest binary registered with CTest.
# Tests are labelled "unit" unless LABELS says otherwise ("long" tests are skipped in the
# sanitizer build).
function(trnsim_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main trnsim_options)
  if(TRNSIM_SANITIZE)
    # The tests' own code unoptimised, with every sanitizer check still in: instrumenting
    # GoogleTest's macro expansions at -O1 took a third longer (36 s against 23 s for
    # sim/tests/timing_test.cpp), and the code under test, in the layers' libraries, keeps the
    # build's -O1.
    target_compile_options(${name} PRIVATE -O0)
  endif()
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST
    PROPERTIES LABELS "${ARG_LABELS}" ENVIRONMENT "TRNSIM_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endfunction()

# trnsim_mark_unity_includes(DIR): every target defined in DIR and below writes a NOLINT
# before each source its unity files include, so that clang-tidy (scripts/lint.sh), which
# reads the unity files, does not take CMake's `#include "x.cpp"` for a mistake.
function(trnsim_mark_unity_includes dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(NOT type STREQUAL "INTERFACE_LIBRARY" AND NOT type STREQUAL "UTILITY")
      set_property(TARGET ${target} PROPERTY UNITY_BUILD_CODE_BEFORE_INCLUDE
        "// NOLINTNEXTLINE(bugprone-suspicious-include)")
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    trnsim_mark_unity_includes(${subdir})
  endforeach()
endfunction()
