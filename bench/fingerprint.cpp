// A fingerprint of what the library kernels compile to and compute: for every kernel, every
// dtype it takes, on every chip preset (and once on a logical core of two), the digest of the
// compiled programs' assembly, the digest of the output bytes, the exact simulated time and
// whether the check passed. Two builds that print the same lines compile, compute and time
// every library kernel identically; a refactoring that must not change behaviour is checked
// by diffing this output before and after. Instruction origins (kernel source lines) are left
// out of the program digest; error messages keep them.
//
//   ./build/bench/fingerprint                 every kernel at its default shape
//   ./build/bench/fingerprint --kernel NAME   one kernel
#include <fmt/core.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "arch/arch.h"
#include "isa/asm.h"
#include "kernels/registry.h"
#include "kernels/runner.h"

namespace {

using namespace trnsim;

// FNV-1a, 64 bits: a stable digest (no std::hash, whose value may change between builds).
class Fnv64 {
 public:
  void add(const void* data, std::size_t size) {
    const auto* bytes = static_cast<const std::uint8_t*>(data);
    for (std::size_t i = 0; i < size; ++i) {
      hash_ ^= bytes[i];
      hash_ *= 0x100000001b3ull;
    }
  }
  void add(std::string_view text) { add(text.data(), text.size()); }
  std::uint64_t value() const { return hash_; }

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ull;
};

// One line per run: label, chip, cores, digests, exact simulated time (hex float).
void fingerprint(const kernels::KernelInfo& info, numerics::DType dtype,
                 const std::string& chip_name, int lnc) {
  const arch::ChipConfig chip = arch::load_preset(chip_name);
  try {
    kernels::Problem problem = info.make(info.default_shape, dtype, chip);
    problem.lnc = lnc;
    const kernels::ProblemReport report = kernels::run_problem(problem, chip);
    Fnv64 program;
    for (isa::Program p : report.built.compiled.programs) {
      // Kernel source lines move with any edit of a kernel file; what the program does does not.
      for (isa::Instruction& inst : p.instructions) inst.origin = {};
      program.add(isa::print_program(p));
    }
    Fnv64 outputs;
    for (const runtime::HostTensor& t : report.launch.outputs) {
      const std::vector<std::uint8_t>& bytes = t.bytes();
      outputs.add(bytes.data(), bytes.size());
    }
    fmt::print("{} | {} lnc={} | asm {:016x} | out {:016x} | {:a} ns | {}\n", report.label,
               chip_name, lnc, program.value(), outputs.value(), report.simulated_ns,
               report.ok() ? "correct" : "WRONG");
  } catch (const std::exception& e) {
    // A kernel that does not take this chip or core count says so; the message is part of
    // the fingerprint (it must not change either).
    std::string what = e.what();
    if (const auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
    fmt::print("{} {} | {} lnc={} | error: {}\n", info.name, numerics::name(dtype), chip_name, lnc,
               what);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--kernel") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else {
      fmt::print(stderr, "usage: {} [--kernel NAME]\n", argv[0]);
      return 2;
    }
  }
  for (const kernels::KernelInfo& info : kernels::library()) {
    if (!only.empty() && info.name != only) continue;
    for (numerics::DType dtype : info.dtypes) fingerprint(info, dtype, "trn3", 1);
    for (const char* chip : {"trn1", "trn2"}) fingerprint(info, info.default_dtype, chip, 1);
    fingerprint(info, info.default_dtype, "trn3", 2);
  }
  return 0;
}
