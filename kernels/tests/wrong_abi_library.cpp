// A kernel library that claims another kernel ABI than this trnsim's: `trnsim run --load`
// must refuse it before calling its entry point (the test kernel_library_wrong_abi).
#include <stdexcept>

#include "kernels/registry.h"

extern "C" {
__attribute__((visibility("default"))) int trnsim_kernel_library_abi() {
  return trnsim::kernels::kKernelLibraryAbi + 1;
}
__attribute__((visibility("default"))) void trnsim_register_kernels() {
  throw std::logic_error("the loader called a library of another ABI");
}
}
