// Loading kernel libraries (plugin.h says how to write one) into the registry.
#pragma once

#include <string>
#include <vector>

namespace trnsim::kernels {

// Opens the shared library at `path`, checks that it was built for this trnsim's kernel ABI
// and calls its trnsim_register_kernels(); returns the names of the kernels it registered.
// Throws util::Error located at the file ("lib.so: error: what (why)") when the file is
// missing or not a shared library, lacks the entry point, was built for another ABI, or
// registers nothing or something invalid. A library that loaded stays loaded (its kernels
// live in it); loading the same file twice is an error (its names are taken).
std::vector<std::string> load_kernel_library(const std::string& path);

}  // namespace trnsim::kernels
