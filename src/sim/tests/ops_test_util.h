// Helpers shared by the elementwise semantics' tests (ops_elementwise_*_test.cpp, the
// sim_ops_tests binary): HostIO, operand builders, value generators and the reference ALU.
//
// HostIO is a small OperandIO over host byte arrays: it walks access patterns (offsets,
// strides, broadcast steps, partition ranges) itself, converts with the numerics layer, and
// pre-fills memory with a sentinel so the tests can check what an instruction left alone.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "numerics/numerics.h"
#include "sim/ops.h"
#include "sim/ops_math.h"

namespace trnsim::sim::ops_testing {

using isa::AccessPattern;
using isa::ActivationFunc;
using isa::AluOp;
using isa::Memory;
using numerics::DType;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr std::uint8_t kSentinel = 0xA5;

inline std::size_t bytes_of(DType t) {
  switch (t) {
    case DType::kFloat32:
    case DType::kTFloat32:
    case DType::kInt32:
    case DType::kUInt32:
    case DType::kFloat8E4M3x4:
    case DType::kFloat8E5M2x4:
      return 4;
    case DType::kBFloat16:
    case DType::kFloat16:
    case DType::kInt16:
    case DType::kUInt16:
    case DType::kFloat4E2M1x4:
      return 2;
    default:
      return 1;
  }
}
inline bool is_signed_int(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32;
}

// An SBUF/PSUM operand: `dims` major to minor as {step, count}.
inline AccessPattern on_chip(DType dtype, std::uint32_t start, std::uint32_t partitions,
                             std::uint64_t offset, std::vector<isa::Dim> dims,
                             Memory memory = Memory::kSbuf) {
  return isa::access_pattern(memory, dtype, start, partitions, offset, dims);
}
// A dense [P, F] SBUF operand.
inline AccessPattern dense(DType dtype, std::uint32_t start, std::uint32_t partitions,
                           std::uint32_t free, std::uint64_t offset = 0) {
  return on_chip(dtype, start, partitions, offset, {{1, free}});
}

class HostIO final : public OperandIO {
 public:
  static constexpr std::uint32_t kPartitions = 128;
  static constexpr std::size_t kPartitionBytes = 16384;

  explicit HostIO(isa::Engine engine = isa::Engine::kVector, std::size_t generators = 1)
      : generators_(generators) {
    for (Memory m : {Memory::kSbuf, Memory::kPsum})
      memory_[m].assign(kPartitions * kPartitionBytes, kSentinel);
    memory_[Memory::kHbm].assign(1 << 20, kSentinel);
    instruction_.queue.engine = engine;
    for (auto e : {isa::Engine::kVector, isa::Engine::kGpSimd}) {
      auto& state = rng_[e];
      state.resize(kPartitions * 6 * generators);
      for (std::size_t i = 0; i < state.size(); ++i)
        state[i] = static_cast<std::uint32_t>(0x9E3779B9u * (i + 1) + static_cast<unsigned>(e));
    }
  }

  // Byte address of element (p, flat free index f).
  std::size_t address(const AccessPattern& ap, std::uint32_t p, std::uint64_t f) const {
    std::int64_t element = 0;
    std::uint64_t rest = f;
    for (int k = ap.num_dims - 1; k >= 0; --k) {
      element += ap.dims[k].step * static_cast<std::int64_t>(rest % ap.dims[k].count);
      rest /= ap.dims[k].count;
    }
    const auto esize = static_cast<std::int64_t>(bytes_of(ap.dtype));
    if (ap.memory == Memory::kHbm)
      return static_cast<std::size_t>(static_cast<std::int64_t>(ap.offset) +
                                      esize * (element + p * ap.partition_step));
    return (ap.start_partition + p) * kPartitionBytes +
           static_cast<std::size_t>(static_cast<std::int64_t>(ap.offset) + esize * element);
  }
  static std::uint64_t count(const AccessPattern& ap) {
    std::uint64_t n = 1;
    for (int k = 0; k < ap.num_dims; ++k) n *= ap.dims[k].count;
    return n;
  }
  std::uint32_t raw(const AccessPattern& ap, std::uint32_t p, std::uint64_t f) const {
    std::uint32_t code = 0;
    std::memcpy(&code, memory_.at(ap.memory).data() + address(ap, p, f), bytes_of(ap.dtype));
    return code;
  }
  void put_raw(const AccessPattern& ap, std::uint32_t p, std::uint64_t f, std::uint32_t code) {
    std::memcpy(memory_.at(ap.memory).data() + address(ap, p, f), &code, bytes_of(ap.dtype));
  }

  Tile load(const AccessPattern& ap) override {
    if (numerics::is_mx_packed(ap.dtype)) throw std::logic_error("load of an x4 type");
    Tile t{ap.partitions, count(ap), {}};
    for (std::uint32_t p = 0; p < ap.partitions; ++p)
      for (std::uint64_t f = 0; f < t.free; ++f)
        t.values.push_back(numerics::decode(ap.dtype, raw(ap, p, f)));
    ++loads;
    return t;
  }
  // Writes code_at(p, f) to every element of ap, a tile of `partitions` x `free` values.
  template <class CodeAt>
  void put_each(const AccessPattern& ap, std::uint32_t partitions, std::uint64_t free,
                const char* what, CodeAt code_at) {
    if (partitions != ap.partitions || free != count(ap))
      throw std::logic_error(std::string(what) + " shape mismatch");
    for (std::uint32_t p = 0; p < ap.partitions; ++p)
      for (std::uint64_t f = 0; f < free; ++f) put_raw(ap, p, f, code_at(p, f));
  }
  void store(const AccessPattern& ap, const Tile& values) override {
    put_each(ap, values.partitions, values.free, "store", [&](std::uint32_t p, std::uint64_t f) {
      return numerics::encode(ap.dtype, values.at(p, f));
    });
  }
  WordTile load_words(const AccessPattern& ap) override {
    WordTile t{ap.partitions, count(ap), {}};
    const unsigned bits = static_cast<unsigned>(8 * bytes_of(ap.dtype));
    for (std::uint32_t p = 0; p < ap.partitions; ++p)
      for (std::uint64_t f = 0; f < t.free; ++f) {
        std::int64_t w = raw(ap, p, f);
        if (is_signed_int(ap.dtype) && (w >> (bits - 1)) != 0) w -= std::int64_t{1} << bits;
        t.words.push_back(w);
      }
    return t;
  }
  void store_words(const AccessPattern& ap, const WordTile& words) override {
    put_each(ap, words.partitions, words.free, "store_words",
             [&](std::uint32_t p, std::uint64_t f) {
               return static_cast<std::uint32_t>(words.words[p * words.free + f]);
             });
  }
  float scalar(const isa::ScalarOperand& operand, std::uint32_t p) override {
    if (const float* immediate = std::get_if<float>(&operand)) return *immediate;
    const auto& ap = std::get<AccessPattern>(operand);
    return numerics::decode(ap.dtype, raw(ap, p, 0));
  }
  std::span<std::uint32_t> rng_state(isa::Engine engine, std::uint32_t partition) override {
    const std::size_t words = 6 * generators_;
    return std::span<std::uint32_t>(rng_.at(engine)).subspan(partition * words, words);
  }
  void seed_rng(isa::Engine engine, std::uint32_t seed) override {
    math::seed_xorwow(rng_.at(engine), seed, engine);
  }
  float& accumulator(std::uint32_t partition) override { return accumulators_.at(partition); }
  const isa::Instruction& instruction() const override { return instruction_; }

  // Test conveniences: write/read values (through the numerics layer) and raw words.
  void write(const AccessPattern& ap, const std::vector<float>& values) {
    store(ap, Tile{ap.partitions, count(ap), values});
  }
  std::vector<float> read(const AccessPattern& ap) { return load(ap).values; }
  void write_words(const AccessPattern& ap, const std::vector<std::int64_t>& words) {
    store_words(ap, WordTile{ap.partitions, count(ap), words});
  }
  std::vector<std::uint32_t> read_raw(const AccessPattern& ap) const {
    std::vector<std::uint32_t> out;
    for (std::uint32_t p = 0; p < ap.partitions; ++p)
      for (std::uint64_t f = 0; f < count(ap); ++f) out.push_back(raw(ap, p, f));
    return out;
  }
  std::uint8_t byte_at(Memory m, std::uint32_t partition, std::size_t offset) const {
    return memory_.at(m)[partition * kPartitionBytes + offset];
  }
  std::vector<std::uint32_t>& rng(isa::Engine e) { return rng_.at(e); }

  int loads = 0;

 private:
  std::map<Memory, std::vector<std::uint8_t>> memory_;
  std::map<isa::Engine, std::vector<std::uint32_t>> rng_;
  std::vector<float> accumulators_ = std::vector<float>(kPartitions, 0.0f);
  std::size_t generators_;
  isa::Instruction instruction_;
};

inline bool run_op(const isa::Operation& op, HostIO& io) {
  return execute_elementwise(op, io);
}

// Expected storage code of `value` in `dtype`; NaNs compare as equal whatever their payload.
inline void expect_codes(DType dtype, const std::vector<std::uint32_t>& actual,
                         const std::vector<float>& expected_values, const char* what) {
  ASSERT_EQ(actual.size(), expected_values.size()) << what;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const std::uint32_t expected = numerics::encode(dtype, expected_values[i]);
    if (std::isnan(numerics::decode(dtype, expected)) &&
        std::isnan(numerics::decode(dtype, actual[i])))
      continue;
    EXPECT_EQ(actual[i], expected)
        << what << " element " << i << ": expected " << expected_values[i] << " got "
        << numerics::decode(dtype, actual[i]);
  }
}

// Random fp32 values with the special cases mixed in.
inline std::vector<float> test_values(std::size_t n, std::uint32_t seed, bool specials = true) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> uniform(-4.0f, 4.0f);
  const std::array<float, 9> special = {0.0f,   -0.0f, kInf,     -kInf, kNaN,
                                        1e-40f, -3.0f, 65504.0f, 1.5f};
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = (specials && i % 5 == 3) ? special[(i / 5) % special.size()] : uniform(gen);
  return v;
}

// ---------------------------------------------------------------------------------------
// Reference ALU, in double where a correctly rounded double result rounds to the same fp32.

inline double ref_max(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::nan("");
  if (a == 0 && b == 0) return (std::signbit(a) && std::signbit(b)) ? -0.0 : 0.0;
  return a < b ? b : a;
}
inline double ref_min(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::nan("");
  if (a == 0 && b == 0) return (std::signbit(a) || std::signbit(b)) ? -0.0 : 0.0;
  return b < a ? b : a;
}
inline float ref_alu(AluOp op, float a_in, float b_in) {
  const double a = a_in, b = b_in;
  auto truth = [](bool t) { return t ? 1.0f : 0.0f; };
  switch (op) {
    case AluOp::kBypass:
      return a_in;
    case AluOp::kAdd:
      return static_cast<float>(a + b);
    case AluOp::kSubtract:
      return static_cast<float>(a - b);
    case AluOp::kMultiply:
      return static_cast<float>(a * b);
    case AluOp::kDivide:
      return static_cast<float>(a / b);
    case AluOp::kMaximum:
      return static_cast<float>(ref_max(a, b));
    case AluOp::kMinimum:
      return static_cast<float>(ref_min(a, b));
    case AluOp::kAbsMax:
      return static_cast<float>(ref_max(std::abs(a), std::abs(b)));
    case AluOp::kAbsMin:
      return static_cast<float>(ref_min(std::abs(a), std::abs(b)));
    case AluOp::kPower:
      return static_cast<float>(std::pow(a, b));
    case AluOp::kEqual:
      return truth(a == b);
    case AluOp::kNotEqual:
      return truth(!(a == b));
    case AluOp::kGreater:
      return truth(b < a);
    case AluOp::kGreaterEqual:
      return truth(b <= a);
    case AluOp::kLess:
      return truth(a < b);
    case AluOp::kLessEqual:
      return truth(a <= b);
    case AluOp::kLogicalAnd:
      return truth(a != 0 && b != 0);
    case AluOp::kLogicalOr:
      return truth(!(a == 0 && b == 0));
    case AluOp::kLogicalXor:
      return truth((a == 0) != (b == 0));
    case AluOp::kFmod:
      return static_cast<float>(std::fmod(a, b));  // exact in double as in fp32
    case AluOp::kMod: {
      // Floored: a - b floor(a / b), from the exact truncated remainder moved into b's sign.
      double r = std::fmod(a, b);
      if (b == 0 || std::isnan(r)) return static_cast<float>(r);
      if (r == 0) return std::signbit(b) ? -0.0f : 0.0f;
      if (std::signbit(r) != std::signbit(b)) r += b;
      return static_cast<float>(r);
    }
    default:
      break;
  }
  throw std::logic_error("no reference for this operator");
}

}  // namespace trnsim::sim::ops_testing
