// Tile arithmetic and the PSUM output blocks the library kernels share (internal to
// kernels/). Helpers that trace instructions take the caller's source location, so errors and
// profiles point at the kernel line that called them, as for the kernel API's own calls.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernel/kernel.h"

namespace trnsim::kernels {

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// With a logical core of several physical cores (NKI kernel[n]), every program traces the
// kernel and they share the HBM inputs and outputs, so each must write only its own part of
// the output. This program's share of the steps 0, step, 2*step, ... < end: every
// num_programs()-th one from the program_id()-th (round-robin, so ragged work at the end
// falls on one program at most once). With one program it is every step, in order.
template <class Fn>
void for_each_owned(std::int64_t end, std::int64_t step, Fn fn) {
  const std::int64_t programs = nl::num_programs(), program = nl::program_id();
  for (std::int64_t x = program * step; x < end; x += programs * step) fn(x);
}

// Visits `rows` rows in tiles of `partitions` x `groups` rows (partition p holding `groups`
// consecutive rows) while whole such tiles fit, then the rest `partitions` rows at a time, one
// group each: tile(first_row, partitions_used, groups). Row-wise kernels (softmax, rope) use it.
// Each program visits only its share of the tiles (every num_programs()-th, counted over both
// kinds), so a logical core of several cores splits the rows.
template <class TileFn>
void for_each_row_tile(std::int64_t rows, std::int64_t partitions, std::int64_t groups,
                       TileFn tile) {
  const std::int64_t programs = nl::num_programs(), program = nl::program_id();
  const std::int64_t big = partitions * groups;
  const std::int64_t grouped_rows = groups > 1 ? rows / big * big : 0;
  std::int64_t index = 0;  // of the tile, across both loops
  for (std::int64_t r0 = 0; r0 < grouped_rows; r0 += big)
    if (index++ % programs == program) tile(r0, partitions, groups);
  for (std::int64_t r0 = grouped_rows; r0 < rows; r0 += partitions)
    if (index++ % programs == program) tile(r0, std::min(partitions, rows - r0), std::int64_t{1});
}

// Throws a KernelError unless `in` holds one tensor per entry of `ranks`, each with that many
// dims. The message says what `kernel` takes (`signature`, e.g. "a_t [K, M] and b [K, N]") and
// what it got; each kernel checks the sizes themselves after this.
void require_inputs(std::span<const kernel::Tensor> in, std::initializer_list<int> ranks,
                    std::string_view kernel, std::string_view signature);

// Throws a KernelError unless block_m x block_n accumulators, one PSUM bank each, fit the
// PSUM banks of the chip being traced (the kernel-side twin of check_psum_block in
// registry.h, which rejects such options before a problem is made).
void check_block_fits_psum(std::string_view kernel, int block_m, int block_n);

// A block of output tiles of c: rows x cols from (m0, n0), in tiles of tile_m x tile_n (the
// last row and column of tiles ragged), each accumulating in its own PSUM bank.
struct OutputBlock {
  std::int64_t m0 = 0, n0 = 0, rows = 0, cols = 0, tile_m = 0, tile_n = 0;
  std::int64_t m_tiles() const { return ceil_div(rows, tile_m); }
  std::int64_t n_tiles() const { return ceil_div(cols, tile_n); }
};

// The fp32 PSUM accumulators of the block's tiles, row by row: tile (i, j) is element
// i * n_tiles() + j.
std::vector<kernel::Tensor> declare_accumulators(const OutputBlock& block,
                                                 kernel::Loc loc = kernel::Loc::current());

// Drains the block into c, tile by tile: PSUM -> SBUF (cast to c's dtype) -> HBM, the DMAs
// named `store_name`.
void store_accumulators(const OutputBlock& block, const std::vector<kernel::Tensor>& acc,
                        const kernel::Tensor& c, const std::string& store_name = "",
                        kernel::Loc loc = kernel::Loc::current());

}  // namespace trnsim::kernels
