# The elementwise semantics' tests as their own binary, linked against the semantics and the
# layers below sim only (no executor): include()d from src/sim/CMakeLists.txt.
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
          ${sim_ops_test_dir}/../ops_elementwise.cpp
          ${sim_ops_test_dir}/../ops_elementwise_activation.cpp
          ${sim_ops_test_dir}/../ops_elementwise_alu.cpp
          ${sim_ops_test_dir}/../ops_elementwise_permute.cpp
          ${sim_ops_test_dir}/../ops_elementwise_random.cpp
          ${sim_ops_test_dir}/../ops_elementwise_reduce.cpp
          ${sim_ops_test_dir}/../ops_elementwise_select.cpp
          ${sim_ops_test_dir}/../ops_gpsimd_index.cpp
  LIBS trnsim_isa trnsim_numerics)
# The semantics define fp32 rounding step by step: never fuse a*b+c.
target_compile_options(sim_ops_tests PRIVATE -ffp-contract=off)
