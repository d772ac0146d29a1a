// Microscaling (MX) kernels for NeuronCore-v4 (trn3): quantise BF16 to MXFP8, dequantise,
// and the MX matmul (kernels/mx.cpp). docs/kernels-norms-mx-conv.md has the layouts.
//
// The HBM layout of an MX matrix is the one nc_matmul_mx and quantize_mx use on chip,
// compacted: data [R, C/4] x4-packed words, word (r, j) holding elements (r, 4j .. 4j+3) in
// its lanes 0..3; scales [ceil(R/8), C/4] uint8 E8M0 codes, scale (g, j) shared by the block
// of 32 elements rows 8g .. 8g+7 x lanes of word j. On chip, rows go on partitions and the
// scale of block (g, j) sits on partition 32 * (g / 4) + g % 4 of the tile (4 scale
// partitions per 32-partition quadrant), which is where quantize_mx writes it and where
// nc_matmul_mx reads it.
//
// For a matmul operand the rows are K / 4 (the contraction dim, 4 values per word): an
// operand X [K, F] (contraction first, as the stationary a_t [K, M] or moving b [K, N]) is
// data [K/4, F] with word (p, f) = X[4p .. 4p+3, f], scales [K/32, F] for the blocks of 32
// consecutive k. mx_quantize produces that from the BF16 matrix Y [K/4, 4F] with
// Y[p, 4f + l] = X[4p + l, f].
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernel/kernel.h"
#include "kernels/registry.h"
#include "runtime/runtime.h"

namespace trnsim::kernels {

using kernel::Tensor;

struct MxQuantizeOptions {
  DType packed = DType::kFloat8E4M3x4;  // or kFloat8E5M2x4 (what quantize_mx produces)
};
// x [R, C] BF16/FP16 (any R, C a multiple of 4) -> {data [R, C/4] packed, scales
// [ceil(R/8), C/4] uint8}, Trainium scale rule, round to nearest even, saturating.
std::vector<Tensor> mx_quantize(std::span<const Tensor> in, const MxQuantizeOptions& options = {});
// {data [R, C/4] MXFP8 x4, scales [ceil(R/8), C/4] uint8} -> out [R, C] fp32 (exact).
std::vector<Tensor> mx_dequantize(std::span<const Tensor> in);

struct MatmulMxOptions {
  DType out_dtype = DType::kBFloat16;  // or kFloat32
  int block_m = 4;                     // output tiles of 128 rows per block
  int block_n = 2;  // output tiles of 512 columns per block (block_m * block_n <= 8 banks)
  bool hoist_a_scales = true;  // load the stationary scales once per row band of blocks
  // Keep the stationary data of a whole row band (all of K) in SBUF when it takes at most
  // this many bytes per partition (64 KiB: K = 8192 with 512-row bands of MXFP8).
  std::int64_t a_band_budget_bytes = 64 * 1024;
};
// c[M, N] = a_t[K, M]^T @ b[K, N] with both operands MX: inputs {a data [K/4, M], a scales
// [K/32, M], b data [K/4, N], b scales [K/32, N]} (fp8_e4m3_x4, fp8_e5m2_x4 or fp4_e2m1_x4;
// both the same type). K a multiple of 128, M even, any N.
std::vector<Tensor> matmul_mx(std::span<const Tensor> in, const MatmulMxOptions& options = {});

// ---- Host side -------------------------------------------------------------------------
// The layout above from plain values x [R, C] (row-major): what mx_quantize computes.
struct HostMx {
  std::vector<std::byte> words;      // [R, C/4] packed words
  std::vector<std::uint8_t> scales;  // [ceil(R/8), C/4]
};
HostMx mx_quantize_host(DType packed, std::span<const float> x, std::int64_t rows,
                        std::int64_t cols);

// Problems with a choice the registry's (shape, dtype) does not carry.
Problem make_matmul_mx_problem(std::int64_t m, std::int64_t n, std::int64_t k, DType packed,
                               const MatmulMxOptions& options = {});

}  // namespace trnsim::kernels
