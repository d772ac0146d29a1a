# libtrnsim and its installed package (docs/user-guide.md, "Your own project").
#
# Every layer is a static library for trnsim's own tests; users get them all as one shared
# library, `trnsim::trnsim`, that carries its include directories and dependencies:
#
#   find_package(trnsim REQUIRED)
#   target_link_libraries(app PRIVATE trnsim::trnsim)
#
# The CLI links the same shared library, so a kernel library that `trnsim run --load` opens
# registers its kernels in the one registry the CLI reads (a static copy in the plugin would
# have its own).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(trnsim_layers trnsim_arch trnsim_system trnsim_numerics trnsim_isa trnsim_timing trnsim_sim
    trnsim_sim_semantics trnsim_collective
    trnsim_profile trnsim_kernel trnsim_compiler trnsim_runtime trnsim_kernels)
# Every object of every layer (the layers' own static archives hold the same objects), used by
# trnsim or not, since its users may call any public function.
set(trnsim_objects "")
foreach(layer IN LISTS trnsim_layers)
  list(APPEND trnsim_objects $<TARGET_OBJECTS:${layer}>)
endforeach()
add_library(trnsim_shared SHARED ${trnsim_objects})
add_library(trnsim::trnsim ALIAS trnsim_shared)
set_target_properties(trnsim_shared PROPERTIES
  OUTPUT_NAME trnsim EXPORT_NAME trnsim LINKER_LANGUAGE CXX
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
target_link_libraries(trnsim_shared
  PRIVATE trnsim_options ${CMAKE_DL_LIBS}
  PUBLIC fmt::fmt nlohmann_json::nlohmann_json Threads::Threads)
target_include_directories(trnsim_shared INTERFACE
  "$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src;${PROJECT_SOURCE_DIR}>"
  "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/trnsim>")
target_compile_features(trnsim_shared INTERFACE cxx_std_20)
# The kernel API's option structs are filled with designated initializers naming only what
# differs from the defaults ({.name = "y"}, as NKI's keyword arguments); -Wextra would flag
# every such call in the user's code.
target_compile_options(trnsim_shared INTERFACE
  $<$<CXX_COMPILER_ID:GNU,Clang>:-Wno-missing-field-initializers>)

install(TARGETS trnsim_shared EXPORT trnsimTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS trnsim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
set_target_properties(trnsim PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
# The public headers: each layer's, the header-only util layer and the kernel library's.
foreach(layer arch system numerics isa timing sim collective profile kernel compiler runtime util)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/${layer}/
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/trnsim/${layer}
    FILES_MATCHING PATTERN "*.h" PATTERN "tests" EXCLUDE PATTERN "fuzz" EXCLUDE
    PATTERN "presets" EXCLUDE)
endforeach()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/kernels/
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/trnsim/kernels
  FILES_MATCHING PATTERN "*.h" PATTERN "tests" EXCLUDE)

set(config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/trnsim)
install(EXPORT trnsimTargets NAMESPACE trnsim:: DESTINATION ${config_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/trnsimConfig.cmake.in
  ${PROJECT_BINARY_DIR}/trnsimConfig.cmake INSTALL_DESTINATION ${config_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/trnsimConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/trnsimConfig.cmake
  ${PROJECT_BINARY_DIR}/trnsimConfigVersion.cmake DESTINATION ${config_dir})

# The package as a user meets it: install this build into a scratch prefix, build the example
# project examples/kernels against it on its own (find_package, warnings as errors), run its
# program and load its kernel library into the installed CLI. Labelled "package", not
# "unit": the sanitizer build of CI skips it (the test command runs it).
add_test(NAME package_out_of_tree
  COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
          -DWORK=${PROJECT_BINARY_DIR}/package_test -DGENERATOR=${CMAKE_GENERATOR}
          -P ${PROJECT_SOURCE_DIR}/cmake/package_test.cmake)
set_tests_properties(package_out_of_tree PROPERTIES LABELS package)
