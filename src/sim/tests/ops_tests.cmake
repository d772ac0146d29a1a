# The elementwise semantics' tests as their own binary, linked against the semantics and the
# layers below sim only (no executor): include()d from src/sim/CMakeLists.txt.
trnsim_add_test(sim_ops_tests
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/ops_elementwise_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/../ops_elementwise.cpp
  LIBS trnsim_isa trnsim_numerics)
# The semantics define fp32 rounding step by step: never fuse a*b+c.
target_compile_options(sim_ops_tests PRIVATE -ffp-contract=off)
