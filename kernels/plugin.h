// A kernel library of your own: a shared library that `trnsim run --load FILE` and
// `trnsim profile --load FILE` open, whose kernels then run, check and profile as the
// library's own do (docs/user-guide.md, "Your kernels in trnsim run").
//
// It includes this header, links trnsim::trnsim (find_package(trnsim)) and defines
//
//   void trnsim_register_kernels() {
//     trnsim::kernels::register_kernel({...});  // one KernelInfo per kernel (registry.h)
//   }
//
// Register from that function, not from static initialisers: the loader reports what it
// throws (a name registered twice, a bad option), which it cannot while the file loads.
// examples/kernels/gelu_bias_library.cpp is a complete one.
#pragma once

#include "kernels/registry.h"

extern "C" {
// The entry point the loader calls once (C linkage: its name is not mangled).
void trnsim_register_kernels();

// The ABI the library was compiled against (defined here: every kernel library has it).
__attribute__((used, visibility("default"))) inline int trnsim_kernel_library_abi() {
  return trnsim::kernels::kKernelLibraryAbi;
}
}
