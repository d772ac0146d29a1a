// Random numbers (rand2, rng, dropout, set_rng_seed, rand_set_state, rand_get_state) and
// MX quantisation (quantize_mx) (docs/simulator-ops.md).
//
// Random numbers: the state belongs to the engine's lane, so it is addressed by absolute
// partition. A lane may hold several XORWOW generators (6 words each: 1 on GpSimd, 4 on the
// gen4 Vector engine); element i of a row draws from generator i mod count.
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>

#include "numerics/numerics.h"
#include "sim/ops_elementwise_detail.h"
#include "sim/ops_math.h"

namespace trnsim::sim::elementwise_detail {

namespace {

std::span<std::uint32_t> lane_state(OperandIO& io, const AccessPattern& ap, std::uint32_t p) {
  const std::span<std::uint32_t> state =
      io.rng_state(io.instruction().queue.engine, ap.start_partition + p);
  require(state.size() >= math::kXorwowWords && state.size() % math::kXorwowWords == 0,
          "rng state must be a whole number of 6-word XORWOW generators");
  return state;
}

// The draw for element i of a lane's row: its generator is i mod the lane's count.
std::uint32_t draw(std::span<std::uint32_t> state, std::uint64_t i) {
  const std::uint64_t generators = state.size() / math::kXorwowWords;
  return math::xorwow_next(
      state.subspan((i % generators) * math::kXorwowWords, math::kXorwowWords));
}

}  // namespace

// MXFP8 quantisation in the layout nc_matmul_mx consumes. A block of 32 values is 8
// partitions x 4 consecutive elements: block (quadrant q, row group s in 0..3, word j) covers
// src partitions 32q + 8s .. 32q + 8s + 7, elements 4j .. 4j + 3; its 4 x 8 codes become word j
// of those dst partitions (element 4j + e in lane e) and its E8M0 scale goes to dst_scale
// partition 32q + s, element j. Only those 4 scale partitions per quadrant are written, so
// other scale tensors packed at offsets 4/8/12 of a quadrant survive. The scale follows
// Trainium's rule (2x the OCP scale); elements round to nearest even and saturate.
bool run(const isa::QuantizeMx& op, OperandIO& io) {
  constexpr std::uint32_t kQuadrant = 32;
  constexpr std::uint32_t kRowsPerBlock = 8;
  constexpr std::uint32_t kLanes = 4;
  require(op.dst.dtype == DType::kFloat8E4M3x4 || op.dst.dtype == DType::kFloat8E5M2x4,
          "quantize_mx dst must be float8_e4m3fn_x4 or float8_e5m2_x4");
  const Tile src = io.load(op.src);
  const std::uint32_t partitions = src.partitions;
  require(partitions % kQuadrant == 0 && partitions > 0,
          "quantize_mx src partitions must be a multiple of 32");
  require(src.free % kLanes == 0, "quantize_mx src free size must be a multiple of 4");
  const std::uint64_t words = src.free / kLanes;
  require_shape(op.dst, partitions, words, "quantize_mx dst must be [P, F/4]");
  const std::uint32_t quadrants = partitions / kQuadrant;
  require(op.dst_scale.partitions >= (quadrants - 1) * kQuadrant + kLanes &&
              free_count(op.dst_scale) == words,
          "quantize_mx dst_scale must cover 4 partitions per quadrant and F/4 elements");

  numerics::MxOptions options;
  options.element = op.dst.dtype == DType::kFloat8E4M3x4 ? DType::kFloat8E4M3 : DType::kFloat8E5M2;
  options.scale_rule = numerics::MxScaleRule::kTrainium;
  options.rounding = numerics::RoundingMode::kNearestEven;

  WordTile packed = make_word_tile(partitions, words);
  WordTile scale_rows = make_word_tile(kLanes, words);  // one quadrant's 4 scale partitions
  std::array<float, numerics::kMxBlockSize> block{};
  std::array<std::uint8_t, numerics::kMxBlockSize> codes{};
  for (std::uint32_t q = 0; q < quadrants; ++q) {
    for (std::uint32_t s = 0; s < kLanes; ++s) {
      const std::uint32_t first_row = q * kQuadrant + s * kRowsPerBlock;
      for (std::uint64_t j = 0; j < words; ++j) {
        for (std::uint32_t r = 0; r < kRowsPerBlock; ++r)
          for (std::uint32_t e = 0; e < kLanes; ++e)
            block[r * kLanes + e] = src.values[(first_row + r) * src.free + j * kLanes + e];
        const std::uint8_t scale = numerics::quantize_mx_block(block, codes, options);
        scale_rows.words[s * words + j] = scale;
        for (std::uint32_t r = 0; r < kRowsPerBlock; ++r) {
          std::uint32_t word = 0;
          for (std::uint32_t e = 0; e < kLanes; ++e)
            word |= std::uint32_t{codes[r * kLanes + e]} << (8 * e);
          packed.words[(first_row + r) * words + j] = word;
        }
      }
    }
    io.store_words(partition_slice(op.dst_scale, q * kQuadrant, kLanes), scale_rows);
  }
  io.store_words(op.dst, packed);
  return true;
}

bool run(const isa::Rand2& op, OperandIO& io) {
  const std::uint32_t partitions = op.dst.partitions;
  const std::uint64_t free = free_count(op.dst);
  Tile out = make_tile(partitions, free);
  for (std::uint32_t p = 0; p < partitions; ++p) {
    const std::span<std::uint32_t> state = lane_state(io, op.dst, p);
    for (std::uint64_t i = 0; i < free; ++i)
      out.values[p * free + i] = math::uniform_from_bits(draw(state, i), op.min, op.max);
  }
  io.store(op.dst, out);
  return true;
}

bool run(const isa::RandSetState& op, OperandIO& io) {
  const WordTile seeds = io.load_words(op.src_seeds);
  for (std::uint32_t p = 0; p < seeds.partitions; ++p) {
    const std::span<std::uint32_t> state = lane_state(io, op.src_seeds, p);
    require(seeds.free == state.size(), "rand_set_state needs exactly one state per partition");
    const auto row = seeds.words.begin() + static_cast<std::ptrdiff_t>(p * seeds.free);
    std::transform(row, row + static_cast<std::ptrdiff_t>(state.size()), state.begin(),
                   [](auto word) { return static_cast<std::uint32_t>(word); });
  }
  return true;
}

bool run(const isa::RandGetState& op, OperandIO& io) {
  WordTile out = make_word_tile(op.dst.partitions, free_count(op.dst));
  for (std::uint32_t p = 0; p < out.partitions; ++p) {
    const std::span<std::uint32_t> state = lane_state(io, op.dst, p);
    require(out.free == state.size(), "rand_get_state needs exactly one state per partition");
    std::ranges::copy(state, out.words.begin() + static_cast<std::ptrdiff_t>(p * out.free));
  }
  io.store_words(op.dst, out);
  return true;
}

// The low bits of each 32-bit draw: storage words keep the dtype's width (store_words
// truncates), so int8 takes bits 0..7 as two's complement.
bool run(const isa::Rng& op, OperandIO& io) {
  WordTile out = make_word_tile(op.dst.partitions, free_count(op.dst));
  const unsigned bits = math::storage_bits(op.dst.dtype);
  for (std::uint32_t p = 0; p < out.partitions; ++p) {
    const std::span<std::uint32_t> state = lane_state(io, op.dst, p);
    for (std::uint64_t i = 0; i < out.free; ++i) {
      std::uint32_t word = draw(state, i);
      if (bits < 32) word &= (std::uint32_t{1} << bits) - 1;
      out.words[p * out.free + i] = word;
    }
  }
  io.store_words(op.dst, out);
  return true;
}

bool run(const isa::SetRngSeed& op, OperandIO& io) {
  const WordTile seed = io.load_words(op.src_seeds);
  require(seed.words.size() == 1, "set_rng_seed takes one [1, 1] seed");
  io.seed_rng(isa::Engine::kVector, static_cast<std::uint32_t>(seed.words[0]));
  return true;
}

// Each element draws a uniform u in [0, 1) (as rand2 does, from the lane of its dst
// partition, as every operation here) and is kept when u >= prob, so prob 0 keeps
// everything and prob 1 drops everything. Kept elements move as storage words, exact for
// every dtype; dropped ones become the dtype's zero (all bits clear).
bool run(const isa::Dropout& op, OperandIO& io) {
  WordTile data = io.load_words(op.data);
  require_shape(op.dst, data.partitions, data.free, "dropout dst shape");
  for (std::uint32_t p = 0; p < data.partitions; ++p) {
    const float prob = io.scalar(op.prob, p);
    const std::span<std::uint32_t> state = lane_state(io, op.dst, p);
    for (std::uint64_t i = 0; i < data.free; ++i)
      if (math::uniform_from_bits(draw(state, i), 0.0f, 1.0f) < prob)
        data.words[p * data.free + i] = 0;
  }
  io.store_words(op.dst, data);
  return true;
}

}  // namespace trnsim::sim::elementwise_detail
