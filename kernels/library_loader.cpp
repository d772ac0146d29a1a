#include "kernels/library_loader.h"

#include <dlfcn.h>
#include <fmt/core.h>

#include <exception>
#include <filesystem>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "kernels/registry.h"
#include "util/diagnostic.h"

namespace trnsim::kernels {

namespace {

[[noreturn]] void fail(const std::string& path, std::string message,
                       std::vector<util::Note> notes = {}) {
  util::Diagnostic d;
  d.where.file = path;
  d.message = std::move(message);
  d.notes = std::move(notes);
  throw util::Error(std::move(d));
}

util::Note how_to_write_one() {
  util::Note note;
  note.message =
      "a kernel library includes kernels/plugin.h, defines trnsim_register_kernels() and links "
      "trnsim::trnsim (docs/user-guide.md; examples/kernels/gelu_bias_library.cpp)";
  return note;
}

// dlsym for a function: nullptr when the library does not define `name`.
template <class Fn>
Fn* find_function(void* handle, const char* name) {
  return reinterpret_cast<Fn*>(dlsym(handle, name));
}

}  // namespace

std::vector<std::string> load_kernel_library(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) fail(path, "kernel library: no such file");
  if (!std::filesystem::is_regular_file(status))
    fail(path, "kernel library: not a regular file (a shared library built against trnsim)",
         {how_to_write_one()});
  // A name without a '/' would make dlopen search the system's library directories.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    fail(path, fmt::format("cannot load the kernel library ({})", why != nullptr ? why : "?"),
         {how_to_write_one()});
  }
  // Looked up in the library itself: trnsim defines neither name, so a hit is the library's.
  auto* abi = find_function<int()>(handle, "trnsim_kernel_library_abi");
  auto* entry = find_function<void()>(handle, "trnsim_register_kernels");
  if (entry == nullptr || abi == nullptr) {
    dlclose(handle);
    fail(
        path,
        fmt::format("not a trnsim kernel library (it defines no {})",
                    entry == nullptr ? "trnsim_register_kernels()" : "trnsim_kernel_library_abi()"),
        {how_to_write_one()});
  }
  if (const int built_for = abi(); built_for != kKernelLibraryAbi) {
    dlclose(handle);
    fail(path, fmt::format("built for trnsim's kernel ABI {}, this trnsim has ABI {} (rebuild "
                           "it against this trnsim's installed package)",
                           built_for, kKernelLibraryAbi));
  }
  std::set<std::string> before;
  for (const KernelInfo& k : library()) before.insert(k.name);
  // From here the library stays loaded even on error: a kernel it registered before the
  // error holds code that lives in it.
  try {
    entry();
  } catch (const std::exception& e) {
    fail(path, fmt::format("trnsim_register_kernels() failed ({})", e.what()));
  }
  std::vector<std::string> added;
  for (const KernelInfo& k : library())
    if (!before.contains(k.name)) added.push_back(k.name);
  if (added.empty())
    fail(path, "trnsim_register_kernels() registered no kernel", {how_to_write_one()});
  return added;
}

}  // namespace trnsim::kernels
