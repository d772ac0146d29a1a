// The example kernel as a kernel library: `trnsim run --load` opens it and then runs, checks,
// lists and profiles `gelu_bias` as it does the library's kernels.
//
//   trnsim run --load build/examples/kernels/libgelu_bias_kernels.so gelu_bias --shape 1000x512
//
// docs/user-guide.md, "Your kernels in trnsim run", walks through it.
#include <fmt/core.h>

#include <cmath>
#include <stdexcept>

#include "gelu_bias_kernel.h"
#include "kernels/plugin.h"
#include "runtime/runtime.h"

using namespace trnsim;
using kernels::Problem;
using numerics::DType;

namespace {

// The problem of a shape: deterministic inputs, the reference, the tolerance and the work.
Problem make_gelu_bias(const std::vector<std::int64_t>& shape, DType dtype,
                       const arch::ChipConfig& chip) {
  kernels::require_dims(shape, 2, "RxC");
  if (dtype != DType::kBFloat16) throw std::invalid_argument("gelu_bias takes bfloat16 inputs");
  const std::int64_t rows = shape[0], cols = shape[1];
  kernels::require_fits_hbm("gelu_bias", 4.0 * double(rows) * double(cols) + 4.0 * double(cols),
                            chip);
  Problem p;
  p.label = fmt::format("gelu_bias {}x{} bfloat16", rows, cols);
  p.fn = gelu_bias;
  p.inputs.push_back(runtime::random_tensor("x", DType::kBFloat16, {rows, cols}, 7, -3.0f, 3.0f));
  p.inputs.push_back(runtime::random_tensor("bias", DType::kFloat32, {1, cols}, 8, -1.0f, 1.0f));
  // Reference values at the sampled flat indices of the output.
  p.reference = [cols](const std::vector<std::vector<float>>& in, std::size_t,
                       std::span<const std::int64_t> idx) {
    std::vector<double> want;
    want.reserve(idx.size());
    for (std::int64_t i : idx)
      want.push_back(gelu_bias_reference(in[0][static_cast<std::size_t>(i)],
                                         in[1][static_cast<std::size_t>(i % cols)]));
    return want;
  };
  // |got - want| <= 1e-3 * tol + tol * |want|: the bound of gelu_bias_kernel.h.
  p.tolerance = {1e-3 * kGeluBiasTolerance, kGeluBiasTolerance,
                 "fp32 affine step and gelu, one rounding to bfloat16"};
  p.hbm_bytes = 4.0 * double(rows) * double(cols) + 4.0 * double(cols);  // x, y bf16; bias
  return p;
}

}  // namespace

void trnsim_register_kernels() {
  kernels::register_kernel({"gelu_bias",
                            "y = gelu(x * 0.5 + bias[col]) over x [R,C] (an example kernel "
                            "library: examples/kernels)",
                            "RxC",
                            {1000, 512},
                            DType::kBFloat16,
                            {DType::kBFloat16},
                            make_gelu_bias,
                            {}});
}
