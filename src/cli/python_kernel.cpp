#include "cli/python_kernel.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace trnsim::cli {

namespace fs = std::filesystem;

bool names_python_kernel(int argc, char** argv) {
  if (argc < 3) return false;
  const std::string_view command = argv[1];
  if (command != "run" && command != "profile") return false;
  // Any argument (options may come first, with their values).
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.find(".py:") != std::string_view::npos || arg.ends_with(".py")) return true;
  }
  return false;
}

#ifdef TRNSIM_PYTHON_INTERPRETER
namespace {

// The directory holding the `trnsim` and `nki` packages for this executable, or "".
std::string python_package_dir() {
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  if (error) return "";
  const fs::path candidates[] = {exe.parent_path() / "python",
                                 exe.parent_path().parent_path() / TRNSIM_INSTALL_PYTHON_DIR};
  for (const fs::path& dir : candidates)
    if (fs::exists(dir / "trnsim" / "__init__.py", error)) return dir.string();
  return "";
}

}  // namespace
#endif

int run_python_kernel(int argc, char** argv) {
#ifndef TRNSIM_PYTHON_INTERPRETER
  (void)argc;
  fmt::print(stderr,
             "trnsim: error: {} names a Python kernel, but this trnsim was built without the "
             "Python front end (configure with -DTRNSIM_PYTHON=ON)\n",
             argv[2]);
  return 2;
#else
  const std::string dir = python_package_dir();
  if (dir.empty()) {
    fmt::print(stderr,
               "trnsim: error: the Python front end (the trnsim and nki packages) is not next to "
               "this executable (build it, or install with cmake --install)\n");
    return 2;
  }
  const char* previous = std::getenv("PYTHONPATH");
  const std::string path = previous && *previous ? dir + ":" + previous : dir;
  ::setenv("PYTHONPATH", path.c_str(), 1);
  std::vector<char*> args{const_cast<char*>(TRNSIM_PYTHON_INTERPRETER), const_cast<char*>("-m"),
                          const_cast<char*>("trnsim")};
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  ::execvp(TRNSIM_PYTHON_INTERPRETER, args.data());
  fmt::print(stderr, "trnsim: error: cannot run {}: {}\n", TRNSIM_PYTHON_INTERPRETER,
             std::strerror(errno));
  return 2;
#endif
}

}  // namespace trnsim::cli
