// The kernel library as the CLI, the demo and the tests see it: for each kernel, how to
// build a problem of a given shape, dtype and set of tuning options (kernel callable,
// deterministic inputs), its reference, its tolerance with the reason, and the work it does
// (for achieved vs peak).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "arch/arch.h"
#include "kernel/kernel.h"
#include "kernels/options.h"
#include "runtime/runtime.h"
#include "util/parallel.h"

namespace trnsim::kernels {

using kernel::Tensor;
using numerics::DType;

// Largest allowed |got - want| <= abs + rel * |want| per element.
struct Tolerance {
  double abs = 0;
  double rel = 0;
  std::string why;  // what in the dtypes justifies it
};

// Reference values of output `output` at flat element indices `indices` (row-major), in
// double, from the decoded inputs. Sampling keeps the check of a 4096^3 matmul affordable.
using ReferenceFn =
    std::function<std::vector<double>(const std::vector<std::vector<float>>& inputs,
                                      std::size_t output, std::span<const std::int64_t> indices)>;

// Reference values at the sampled flat indices of a [rows, width] output whose rows are costly
// (an MLP or attention row): each distinct sampled row is computed once, `block` rows at a
// time by `rows(ids)` (one row per id, in order), so that rows sharing costly data (an MLP's
// weights) read it once per block; blocks run on all host threads, each into its own slots,
// so the values do not depend on the thread count (`rows` must only read shared state).
// Then `value(row_data, i, column)` gives each sampled element of row i.
template <class RowsFn, class ValueFn>
std::vector<double> sample_by_row_blocks(std::span<const std::int64_t> indices, std::int64_t width,
                                         std::size_t block, RowsFn rows, ValueFn value) {
  std::vector<std::int64_t> distinct;
  distinct.reserve(indices.size());
  for (std::int64_t flat : indices) distinct.push_back(flat / width);
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  using Row = typename decltype(rows(std::span<const std::int64_t>{}))::value_type;
  std::vector<Row> computed(distinct.size());
  block = std::max<std::size_t>(1, block);
  util::parallel_for((distinct.size() + block - 1) / block, util::resolve_threads(0),
                     [&](std::size_t b) {
                       const std::size_t first = b * block;
                       const std::size_t count = std::min(block, distinct.size() - first);
                       std::vector<Row> some = rows(std::span(distinct).subspan(first, count));
                       std::move(some.begin(), some.end(), computed.begin() + first);
                     });
  std::vector<double> out;
  out.reserve(indices.size());
  for (std::int64_t flat : indices) {
    const std::int64_t i = flat / width;
    const auto slot = std::lower_bound(distinct.begin(), distinct.end(), i) - distinct.begin();
    out.push_back(value(computed[static_cast<std::size_t>(slot)], i, flat % width));
  }
  return out;
}

// acc[j] += x * w[j] for every j: the inner loop of the references' sums in double,
// vectorised for the host's widest ISA; every element is rounded as in the scalar loop
// (a multiply, then an add: no fused multiply-add), so the values are the same on every host.
void add_scaled(std::span<double> acc, double x, const float* w);

// sample_by_row_blocks one row at a time: `row(i)` computes row i.
template <class RowFn, class ValueFn>
std::vector<double> sample_by_row(std::span<const std::int64_t> indices, std::int64_t width,
                                  RowFn row, ValueFn value) {
  return sample_by_row_blocks(
      indices, width, 1,
      [&](std::span<const std::int64_t> ids) {
        return std::vector<decltype(row(std::int64_t{}))>{row(ids.front())};
      },
      value);
}

struct Problem {
  std::string label;  // e.g. "matmul 4096x4096x4096 bf16"
  kernel::KernelFn fn;
  std::vector<runtime::HostTensor> inputs;
  ReferenceFn reference;
  Tolerance tolerance;
  int lnc = 1;
  double flops = 0;       // useful floating-point operations (tensor engine)
  double hbm_bytes = 0;   // minimum HBM traffic (inputs read + outputs written)
  std::string peak_mode;  // tensor mode to compare against: bf16, fp32, fp8, mx; "" = HBM-bound
  // The tuning options that differ from their defaults, with the defaults
  // ("block_n=4 (default 2)"); "" when none. KernelInfo::make fills it (and appends the
  // options to the label); run_problem adds it to a kernel or compiler error.
  std::string options;
};

// What makes a kernel's problem from a shape, a dtype, the chip and the complete (resolved)
// set of its options. Registrations without options may pass a callable of the first three
// arguments only.
using MakeProblemFn =
    std::function<Problem(const std::vector<std::int64_t>& shape, DType dtype,
                          const arch::ChipConfig& chip, const OptionValues& options)>;
struct ProblemMaker {
  MakeProblemFn fn;
  ProblemMaker() = default;
  template <class F>
  requires std::is_invocable_r_v < Problem, F&, const std::vector<std::int64_t>
  &, DType, const arch::ChipConfig&,
      const OptionValues& > ProblemMaker(F f)
      : fn(std::move(f)) {}  // NOLINT(google-explicit-constructor)
  template <class F>
  requires(std::is_invocable_r_v<Problem, F&, const std::vector<std::int64_t>&, DType,
                                 const arch::ChipConfig&> &&
           !std::is_invocable_r_v<Problem, F&, const std::vector<std::int64_t>&, DType,
                                  const arch::ChipConfig&, const OptionValues&>)
      ProblemMaker(F f)  // NOLINT(google-explicit-constructor)
      : fn([g = std::move(f)](const std::vector<std::int64_t>& shape, DType dtype,
                              const arch::ChipConfig& chip,
                              const OptionValues&) mutable { return g(shape, dtype, chip); }) {}
  explicit operator bool() const { return static_cast<bool>(fn); }
};

struct KernelInfo {
  std::string name;
  std::string summary;
  std::string shape_help;  // e.g. "MxNxK"
  std::vector<std::int64_t> default_shape;
  DType default_dtype = DType::kBFloat16;
  std::vector<DType> dtypes;  // accepted input dtypes
  // Throws std::invalid_argument for a shape/dtype/options it does not take. Called with
  // the complete options (every declared one, set or default); use make() below.
  ProblemMaker make_problem;
  // The tuning options the problem maker reads (the knobs of the kernel's options struct),
  // in the order `trnsim run --list` shows them. Names must not be the keys of
  // `trnsim profile --compare` (kernel, shape, dtype, chip, lnc, schedule, power-ramp).
  std::vector<KernelOption> options;

  // The problem of `shape` and `dtype` with the options of `set` (the others at their
  // defaults). Throws std::invalid_argument for an option the kernel does not declare
  // (listing those it does), a value of the wrong type or out of range, and whatever the
  // problem maker rejects (shape, dtype, a combination of options the chip cannot hold).
  // The options that differ from their defaults are appended to the label:
  // "matmul 1024x1024x1024 bfloat16 [block_n=4]".
  Problem make(const std::vector<std::int64_t>& shape, DType dtype, const arch::ChipConfig& chip,
               const OptionValues& set = {}) const;
};

// The version of what trnsim and a kernel library of the user's (plugin.h) exchange: the
// layouts of KernelInfo, Problem and the types they hold. Raised when any of them changes,
// so that a library built against another trnsim is refused instead of misread.
inline constexpr int kKernelLibraryAbi = 1;

// Every kernel registers itself from its own source file:
//   const bool matmul_registered = register_kernel({...});
// (the library is an object library, so no registration is dropped by the linker; the name
// carries the file's so that a unity build, which joins files, keeps each one apart).
// Registering a name twice, an option declared twice, an option name that is a --compare key
// or a default outside the option's own range is a programming error (std::logic_error).
bool register_kernel(KernelInfo info);
// All registered kernels, sorted by name.
const std::vector<KernelInfo>& library();
const KernelInfo* find_kernel(std::string_view name);

// Helpers for problem definitions.
// Half an ulp of `t` relative to the value (2^-24 for fp32, 2^-8 for bf16, ...).
double half_ulp(DType t);
// Throws std::invalid_argument unless `shape` has n positive values.
void require_dims(const std::vector<std::int64_t>& shape, std::size_t n, std::string_view help);
// Throws std::invalid_argument unless `bytes` (what a problem's inputs and outputs take in
// HBM) fit the chip's HBM, with both figures. Trace checks the inputs too, but makers that
// compute their inputs on the host (tables, quantised data) call this first, so that an
// absurd shape is refused before the host tries to allocate it.
void require_fits_hbm(std::string_view kernel, double bytes, const arch::ChipConfig& chip);
// Throws std::invalid_argument unless a block of block_m x block_n output tiles, one PSUM
// bank each, fits the chip's PSUM banks; the message names the two options.
void check_psum_block(std::string_view kernel, std::int64_t block_m, std::int64_t block_n,
                      const arch::ChipConfig& chip);
// The reference of a matmul c [M, N] = a^T b at the flat (row-major) indices `idx`: for
// c[i, j] the sum over kk < k of a(kk, i) * b(kk, j) in double, in order of kk, where a and
// b give the decoded operand values.
template <class OperandA, class OperandB>
std::vector<double> matmul_reference(std::span<const std::int64_t> idx, std::int64_t n,
                                     std::int64_t k, OperandA a, OperandB b) {
  std::vector<double> r;
  r.reserve(idx.size());
  for (std::int64_t flat : idx) {
    const std::int64_t i = flat / n, j = flat % n;
    double s = 0;
    for (std::int64_t kk = 0; kk < k; ++kk) s += a(kk, i) * b(kk, j);
    r.push_back(s);
  }
  return r;
}

struct CheckResult {
  bool ok = true;
  std::size_t checked = 0;  // elements compared
  double max_abs_error = 0;
  double max_rel_error = 0;  // |got - want| / max(|want|, tiny)
  std::string worst;         // description of the worst element
};

// Compares outputs with the reference on up to `samples` elements per output (all when
// the output is smaller; the sample positions are deterministic).
CheckResult check(const Problem& problem, const std::vector<runtime::HostTensor>& outputs,
                  std::size_t samples = 1 << 14);

}  // namespace trnsim::kernels
