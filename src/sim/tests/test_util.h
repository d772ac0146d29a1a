// Helpers shared by the simulator tests: operand and instruction builders, host-side
// encoders written independently of the numerics layer where the format is simple.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

#include "arch/arch.h"
#include "arch/tests/test_presets.h"
#include "isa/isa.h"
#include "sim/sim.h"

namespace trnsim::sim::testing {

using isa::AccessPattern;
using isa::Dim;
using numerics::DType;

using arch::testing::trn2;
using arch::testing::trn3;

inline isa::QueueId tensor_q() {
  return {isa::Engine::kTensor, 0};
}
inline isa::QueueId vector_q() {
  return {isa::Engine::kVector, 0};
}
inline isa::QueueId scalar_q() {
  return {isa::Engine::kScalar, 0};
}
inline isa::QueueId gpsimd_q() {
  return {isa::Engine::kGpSimd, 0};
}
inline isa::QueueId sync_q() {
  return {isa::Engine::kSync, 0};
}
inline isa::QueueId dma_q(std::uint8_t i) {
  return {isa::Engine::kDma, i};
}

// [partitions, dims...] operand in SBUF/PSUM starting at byte `offset` of each partition.
AccessPattern onchip(isa::Memory memory, DType dtype, std::uint32_t start_partition,
                     std::uint32_t partitions, std::uint64_t offset,
                     std::initializer_list<Dim> dims);
inline AccessPattern sbuf(DType dtype, std::uint32_t start_partition, std::uint32_t partitions,
                          std::uint64_t offset, std::initializer_list<Dim> dims) {
  return onchip(isa::Memory::kSbuf, dtype, start_partition, partitions, offset, dims);
}
inline AccessPattern psum(DType dtype, std::uint32_t start_partition, std::uint32_t partitions,
                          std::uint64_t offset, std::initializer_list<Dim> dims) {
  return onchip(isa::Memory::kPsum, dtype, start_partition, partitions, offset, dims);
}
// HBM operand: `rows` rows `row_step` elements apart starting at byte `address`.
AccessPattern hbm(DType dtype, std::uint64_t address, std::uint32_t rows, std::int64_t row_step,
                  std::initializer_list<Dim> dims);

// HBM -> SBUF copy of [rows, free] `dtype` elements: contiguous HBM rows from byte `address`
// into partitions 0.. at byte `offset`.
inline isa::DmaCopy dma_load(DType dtype, std::uint64_t address, std::uint32_t rows,
                             std::uint32_t free, std::uint64_t offset) {
  isa::DmaCopy copy;
  copy.src = hbm(dtype, address, rows, free, {{1, free}});
  copy.dst = sbuf(dtype, 0, rows, offset, {{1, free}});
  return copy;
}
// A tensor_scalar without operators (a copy on its engine) of [partitions, free] `dtype`
// elements in SBUF from byte `src_offset` to `dst_offset`.
inline isa::TensorScalar sbuf_tensor_scalar(DType dtype, std::uint32_t partitions,
                                            std::uint32_t free, std::uint64_t src_offset,
                                            std::uint64_t dst_offset) {
  isa::TensorScalar ts;
  ts.data = sbuf(dtype, 0, partitions, src_offset, {{1, free}});
  ts.dst = sbuf(dtype, 0, partitions, dst_offset, {{1, free}});
  return ts;
}

// Timing only (no data) without the hazard detector, costed by `model` (nullptr = unit
// costs): how the timing tests run their instruction streams.
inline RunOptions timing_only_options(CostModel* model = nullptr) {
  RunOptions options;
  options.functional = false;
  options.check_hazards = false;
  options.cost_model = model;
  return options;
}

isa::Instruction make(isa::QueueId queue, isa::Operation op, std::vector<isa::SemWait> waits = {},
                      std::vector<isa::SemSignal> signals = {});

// Host encodings (truncation-free cases): fp32 bits, bf16 from fp32 by RNE on the bits.
inline std::uint32_t f32_bits(float f) {
  return std::bit_cast<std::uint32_t>(f);
}
inline float bf16_to_f32(std::uint16_t b) {
  return std::bit_cast<float>(std::uint32_t{b} << 16);
}
std::uint16_t f32_to_bf16_rne(float f);

template <class T>
std::vector<std::uint8_t> to_bytes(const std::vector<T>& values) {
  std::vector<std::uint8_t> out(values.size() * sizeof(T));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}
template <class T>
std::vector<T> from_bytes(const std::vector<std::uint8_t>& bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  return out;
}

// Small deterministic generator for test data.
class TestRng {
 public:
  explicit TestRng(std::uint64_t seed) : state_(seed * 2654435761u + 12345) {}
  std::uint32_t next();
  float uniform(float lo, float hi);  // multiples of 2^-10 of (hi - lo): exact in bf16 sums
  int integer(int lo, int hi);        // inclusive
 private:
  std::uint64_t state_;
};

// Writes host bytes into a core's SBUF/PSUM rows: row r of `bytes` (row_bytes each) at
// partition start + r, byte offset.
void fill_onchip(Core& core, isa::Memory memory, std::uint32_t start, std::uint32_t rows,
                 std::uint64_t offset, const std::vector<std::uint8_t>& bytes);
std::vector<std::uint8_t> read_rows(const Core& core, isa::Memory memory, std::uint32_t start,
                                    std::uint32_t rows, std::uint64_t offset,
                                    std::uint64_t row_bytes);

// The SimError that fn() throws; a test failure naming `expected`, and nullopt, when it
// throws none.
template <class Fn>
std::optional<SimError> sim_error_of(Fn&& fn, const char* expected = "a SimError") {
  try {
    std::forward<Fn>(fn)();
  } catch (const SimError& e) {
    return e;
  }
  ADD_FAILURE() << "expected " << expected;
  return std::nullopt;
}

}  // namespace trnsim::sim::testing
