#include "kernels/tiling.h"

#include <fmt/core.h>

#include <algorithm>

namespace trnsim::kernels {

using kernel::Index;
using kernel::Tensor;

void require_inputs(std::span<const Tensor> in, std::initializer_list<int> ranks,
                    std::string_view kernel, std::string_view signature) {
  if (in.size() != ranks.size())
    throw kernel::KernelError({}, fmt::format("{} takes {} inputs, {}; got {}", kernel,
                                              ranks.size(), signature, in.size()));
  for (std::size_t i = 0; i < in.size(); ++i)
    if (in[i].ndim() != ranks.begin()[i])
      throw kernel::KernelError({}, fmt::format("{} takes {}; input {} has {} dims, not {}", kernel,
                                                signature, i, in[i].ndim(), ranks.begin()[i]));
}

void check_block_fits_psum(std::string_view kernel, int block_m, int block_n) {
  if (block_m < 1 || block_n < 1 || block_m * block_n > nl::tile_size::psum_num_banks())
    throw kernel::KernelError(
        {}, fmt::format("{}: block_m x block_n = {} x {} accumulators need more PSUM "
                        "banks than the {} available",
                        kernel, block_m, block_n, nl::tile_size::psum_num_banks()));
}

std::vector<Tensor> declare_accumulators(const OutputBlock& b, kernel::Loc loc) {
  std::vector<Tensor> acc;
  for (std::int64_t i = 0; i < b.m_tiles(); ++i)
    for (std::int64_t j = 0; j < b.n_tiles(); ++j)
      acc.push_back(nl::ndarray(
          {std::min(b.tile_m, b.rows - i * b.tile_m), std::min(b.tile_n, b.cols - j * b.tile_n)},
          numerics::DType::kFloat32, nl::psum, "acc", loc));
  return acc;
}

void store_accumulators(const OutputBlock& b, const std::vector<Tensor>& acc, const Tensor& c,
                        const std::string& store_name, kernel::Loc loc) {
  for (std::int64_t i = 0; i < b.m_tiles(); ++i) {
    for (std::int64_t j = 0; j < b.n_tiles(); ++j) {
      const Tensor& a = acc[static_cast<std::size_t>(i * b.n_tiles() + j)];
      Tensor out = nl::ndarray(a.shape(), c.dtype(), nl::sbuf, "c_tile", loc);
      nisa::tensor_copy(out, a, {}, loc);
      nisa::dma_copy(c(Index(nl::ds(b.m0 + i * b.tile_m, a.dim(0)), loc),
                       Index(nl::ds(b.n0 + j * b.tile_n, a.dim(1)), loc)),
                     out, {.name = store_name}, loc);
    }
  }
}

}  // namespace trnsim::kernels
