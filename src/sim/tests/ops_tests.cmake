# The elementwise semantics' tests as their own binary, linked against the semantics
# (trnsim_sim_semantics) and the layers below sim only (no executor): include()d from
# src/sim/CMakeLists.txt.
set(sim_ops_test_dir ${CMAKE_CURRENT_LIST_DIR})
trnsim_add_test(sim_ops_tests
  SOURCES ${sim_ops_test_dir}/ops_elementwise_test.cpp
          ${sim_ops_test_dir}/ops_elementwise_activation_test.cpp
          ${sim_ops_test_dir}/ops_elementwise_alu_test.cpp
          ${sim_ops_test_dir}/ops_elementwise_permute_test.cpp
          ${sim_ops_test_dir}/ops_elementwise_random_test.cpp
          ${sim_ops_test_dir}/ops_elementwise_reduce_test.cpp
          ${sim_ops_test_dir}/ops_elementwise_select_test.cpp
          ${sim_ops_test_dir}/ops_gpsimd_index_test.cpp
  LIBS trnsim_sim_semantics trnsim_isa trnsim_numerics)
# The semantics define fp32 rounding step by step: never fuse a*b+c.
target_compile_options(sim_ops_tests PRIVATE -ffp-contract=off)
