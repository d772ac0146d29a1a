// Tests of execute_elementwise against references written independently in this file.
//
// HostIO is a small OperandIO over host byte arrays: it walks access patterns (offsets,
// strides, broadcast steps, partition ranges) itself, converts with the numerics layer, and
// pre-fills memory with a sentinel so the tests can check what an instruction left alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include "numerics/numerics.h"
#include "sim/ops.h"

namespace trnsim::sim {
namespace {

using isa::AccessPattern;
using isa::ActivationFunc;
using isa::AluOp;
using isa::Memory;
using numerics::DType;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr std::uint8_t kSentinel = 0xA5;

std::size_t bytes_of(DType t) {
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
bool is_signed_int(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32;
}

// An SBUF/PSUM operand: `dims` major to minor as {step, count}.
AccessPattern on_chip(DType dtype, std::uint32_t start, std::uint32_t partitions,
                      std::uint64_t offset, std::vector<isa::Dim> dims,
                      Memory memory = Memory::kSbuf) {
  AccessPattern ap;
  ap.memory = memory;
  ap.dtype = dtype;
  ap.start_partition = start;
  ap.partitions = partitions;
  ap.offset = offset;
  ap.num_dims = static_cast<std::uint8_t>(dims.size());
  for (std::size_t k = 0; k < dims.size(); ++k) ap.dims[k] = dims[k];
  return ap;
}
// A dense [P, F] SBUF operand.
AccessPattern dense(DType dtype, std::uint32_t start, std::uint32_t partitions, std::uint32_t free,
                    std::uint64_t offset = 0) {
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
  void store(const AccessPattern& ap, const Tile& values) override {
    if (values.partitions != ap.partitions || values.free != count(ap))
      throw std::logic_error("store shape mismatch");
    for (std::uint32_t p = 0; p < ap.partitions; ++p)
      for (std::uint64_t f = 0; f < values.free; ++f)
        put_raw(ap, p, f, numerics::encode(ap.dtype, values.at(p, f)));
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
    if (words.partitions != ap.partitions || words.free != count(ap))
      throw std::logic_error("store_words shape mismatch");
    for (std::uint32_t p = 0; p < ap.partitions; ++p)
      for (std::uint64_t f = 0; f < words.free; ++f)
        put_raw(ap, p, f, static_cast<std::uint32_t>(words.words[p * words.free + f]));
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
  std::size_t generators_;
  isa::Instruction instruction_;
};

bool run_op(const isa::Operation& op, HostIO& io) {
  return execute_elementwise(op, io);
}

// Expected storage code of `value` in `dtype`; NaNs compare as equal whatever their payload.
void expect_codes(DType dtype, const std::vector<std::uint32_t>& actual,
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
std::vector<float> test_values(std::size_t n, std::uint32_t seed, bool specials = true) {
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

double ref_max(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::nan("");
  if (a == 0 && b == 0) return (std::signbit(a) && std::signbit(b)) ? -0.0 : 0.0;
  return a < b ? b : a;
}
double ref_min(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::nan("");
  if (a == 0 && b == 0) return (std::signbit(a) || std::signbit(b)) ? -0.0 : 0.0;
  return b < a ? b : a;
}
float ref_alu(AluOp op, float a_in, float b_in) {
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
    default:
      break;
  }
  throw std::logic_error("no reference for this operator");
}

const std::vector<AluOp> kArithmeticOps = {
    AluOp::kAdd,        AluOp::kSubtract,  AluOp::kMultiply,     AluOp::kDivide, AluOp::kMaximum,
    AluOp::kMinimum,    AluOp::kAbsMax,    AluOp::kAbsMin,       AluOp::kPower,  AluOp::kEqual,
    AluOp::kNotEqual,   AluOp::kGreater,   AluOp::kGreaterEqual, AluOp::kLess,   AluOp::kLessEqual,
    AluOp::kLogicalAnd, AluOp::kLogicalOr, AluOp::kLogicalXor,   AluOp::kBypass};

// ---------------------------------------------------------------------------------------

struct DTypeCase {
  DType in1, in2, out;
};

TEST(TensorTensor, EveryArithmeticOperatorAcrossDtypes) {
  const std::vector<DTypeCase> cases = {{DType::kFloat32, DType::kFloat32, DType::kFloat32},
                                        {DType::kBFloat16, DType::kFloat32, DType::kBFloat16},
                                        {DType::kFloat16, DType::kBFloat16, DType::kFloat32},
                                        {DType::kFloat8E4M3, DType::kFloat32, DType::kFloat16},
                                        {DType::kFloat32, DType::kFloat32, DType::kInt32}};
  constexpr std::uint32_t P = 5, F = 7;
  for (const auto& c : cases) {
    for (AluOp op : kArithmeticOps) {
      HostIO io;
      const auto a_ap = dense(c.in1, 3, P, F, 0);
      const auto b_ap = dense(c.in2, 3, P, F, 256);
      const auto d_ap = dense(c.out, 10, P, F, 512);
      io.write(a_ap, test_values(P * F, 1));
      io.write(b_ap, test_values(P * F, 2));
      const auto a = io.read(a_ap), b = io.read(b_ap);
      ASSERT_TRUE(run_op(isa::TensorTensor{d_ap, a_ap, b_ap, op}, io));
      std::vector<float> expected(P * F);
      for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = ref_alu(op, a[i], b[i]);
      expect_codes(c.out, io.read_raw(d_ap), expected, std::string(isa::alu_op_name(op)).c_str());
    }
  }
}

TEST(TensorTensor, IeeeEdgeCases) {
  HostIO io;
  const std::vector<float> a = {1.0f, -1.0f, 0.0f, -0.0f, 0.0f, kNaN, 2.0f, -0.0f};
  const std::vector<float> b = {0.0f, 0.0f, 0.0f, 0.0f, -0.0f, 1.0f, kNaN, -0.0f};
  const auto a_ap = dense(DType::kFloat32, 0, 1, 8, 0), b_ap = dense(DType::kFloat32, 0, 1, 8, 64);
  const auto d_ap = dense(DType::kFloat32, 0, 1, 8, 128);
  io.write(a_ap, a);
  io.write(b_ap, b);
  run_op(isa::TensorTensor{d_ap, a_ap, b_ap, AluOp::kDivide}, io);
  auto d = io.read(d_ap);
  EXPECT_EQ(d[0], kInf);
  EXPECT_EQ(d[1], -kInf);
  EXPECT_TRUE(std::isnan(d[2]));
  run_op(isa::TensorTensor{d_ap, a_ap, b_ap, AluOp::kMaximum}, io);
  d = io.read(d_ap);
  EXPECT_FALSE(std::signbit(d[3]));  // max(-0, +0) = +0
  EXPECT_FALSE(std::signbit(d[4]));
  EXPECT_TRUE(std::isnan(d[5]));
  EXPECT_TRUE(std::isnan(d[6]));
  EXPECT_TRUE(std::signbit(d[7]));
  run_op(isa::TensorTensor{d_ap, a_ap, b_ap, AluOp::kMinimum}, io);
  d = io.read(d_ap);
  EXPECT_TRUE(std::signbit(d[3]));  // min(-0, +0) = -0
  run_op(isa::TensorTensor{d_ap, a_ap, b_ap, AluOp::kNotEqual}, io);
  d = io.read(d_ap);
  EXPECT_EQ(d[5], 1.0f);  // NaN != x
  EXPECT_EQ(d[3], 0.0f);  // -0 == +0
}

TEST(TensorTensor, BitwiseOnIntegerWords) {
  HostIO io;
  const std::vector<std::int64_t> a = {-1, 0x7FFFFFFF, -2147483648LL, 0x12345678, -16, 5, 1, -1};
  const std::vector<std::int64_t> b = {0x0F0F0F0F, 3, 1, 0xFF, 2, 32, 31, 40};
  const auto a_ap = dense(DType::kInt32, 2, 1, 8, 0), b_ap = dense(DType::kInt32, 2, 1, 8, 64);
  const auto d_ap = dense(DType::kInt32, 2, 1, 8, 128);
  io.write_words(a_ap, a);
  io.write_words(b_ap, b);
  auto u32 = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
  struct Case {
    AluOp op;
    std::uint32_t (*ref)(std::uint32_t, std::uint32_t);
  };
  const std::vector<Case> cases = {
      {AluOp::kBitwiseAnd, [](std::uint32_t x, std::uint32_t y) { return x & y; }},
      {AluOp::kBitwiseOr, [](std::uint32_t x, std::uint32_t y) { return x | y; }},
      {AluOp::kBitwiseXor, [](std::uint32_t x, std::uint32_t y) { return x ^ y; }},
      {AluOp::kLeftShift, [](std::uint32_t x, std::uint32_t y) { return y >= 32 ? 0u : x << y; }},
      {AluOp::kRightShift, [](std::uint32_t x, std::uint32_t y) { return y >= 32 ? 0u : x >> y; }},
  };
  for (const auto& c : cases) {
    ASSERT_TRUE(run_op(isa::TensorTensor{d_ap, a_ap, b_ap, c.op}, io));
    const auto got = io.read_raw(d_ap);
    for (std::size_t i = 0; i < a.size(); ++i)
      EXPECT_EQ(got[i], c.ref(u32(a[i]), u32(b[i]))) << isa::alu_op_name(c.op) << " " << i;
  }
  // Logical right shift of int16 shifts zeros in above bit 15.
  const auto h_ap = dense(DType::kInt16, 0, 1, 2, 0), s_ap = dense(DType::kInt16, 0, 1, 2, 32);
  const auto hd_ap = dense(DType::kInt16, 0, 1, 2, 64);
  io.write_words(h_ap, {-2, -32768});
  io.write_words(s_ap, {1, 15});
  run_op(isa::TensorTensor{hd_ap, h_ap, s_ap, AluOp::kRightShift}, io);
  EXPECT_EQ(io.read_raw(hd_ap), (std::vector<std::uint32_t>{0x7FFF, 0x1}));
}

TEST(TensorTensor, StridedAndBroadcastOperands) {
  HostIO io;
  constexpr std::uint32_t P = 3;
  // data1: [P, 2, 3] walking every other element of a row; data2: [P, 2, 3] broadcasting a
  // 3-element row over the outer dim (step 0); dst: dense.
  const auto a_ap = on_chip(DType::kFloat32, 4, P, 0, {{6, 2}, {2, 3}});
  const auto b_ap = on_chip(DType::kBFloat16, 4, P, 256, {{0, 2}, {1, 3}});
  const auto d_ap = on_chip(DType::kFloat32, 4, P, 512, {{3, 2}, {1, 3}});
  io.write(dense(DType::kFloat32, 4, P, 12, 0), test_values(P * 12, 7, false));
  io.write(dense(DType::kBFloat16, 4, P, 3, 256), test_values(P * 3, 8, false));
  const auto row_a = io.read(dense(DType::kFloat32, 4, P, 12, 0));
  const auto row_b = io.read(dense(DType::kBFloat16, 4, P, 3, 256));
  ASSERT_TRUE(run_op(isa::TensorTensor{d_ap, a_ap, b_ap, AluOp::kSubtract}, io));
  std::vector<float> expected;
  for (std::uint32_t p = 0; p < P; ++p)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        expected.push_back(row_a[p * 12 + 6 * i + 2 * j] - row_b[p * 3 + j]);
  expect_codes(DType::kFloat32, io.read_raw(d_ap), expected, "strided subtract");
}

TEST(TensorScalar, TwoOperatorsWithReverseFlagsAndTensorOperands) {
  constexpr std::uint32_t P = 6, F = 9;
  for (int reverse_bits = 0; reverse_bits < 4; ++reverse_bits) {
    HostIO io(isa::Engine::kScalar);
    const auto data_ap = dense(DType::kBFloat16, 1, P, F, 0);
    const auto col_ap = dense(DType::kFloat32, 1, P, 1, 1024);
    const auto dst_ap = dense(DType::kFloat32, 1, P, F, 2048);
    io.write(data_ap, test_values(P * F, 11));
    io.write(col_ap, {2.0f, -0.5f, 0.0f, 3.0f, kInf, -7.0f});
    const auto data = io.read(data_ap), col = io.read(col_ap);
    isa::TensorScalar op;
    op.dst = dst_ap;
    op.data = data_ap;
    op.op0 = AluOp::kSubtract;
    op.operand0 = col_ap;
    op.reverse0 = reverse_bits & 1;
    op.op1 = AluOp::kDivide;
    op.operand1 = 3.0f;
    op.reverse1 = (reverse_bits & 2) != 0;
    ASSERT_TRUE(run_op(op, io));
    std::vector<float> expected;
    for (std::uint32_t p = 0; p < P; ++p)
      for (std::uint32_t i = 0; i < F; ++i) {
        const float x = data[p * F + i];
        const float t = op.reverse0 ? ref_alu(AluOp::kSubtract, col[p], x)
                                    : ref_alu(AluOp::kSubtract, x, col[p]);
        expected.push_back(op.reverse1 ? ref_alu(AluOp::kDivide, 3.0f, t)
                                       : ref_alu(AluOp::kDivide, t, 3.0f));
      }
    expect_codes(DType::kFloat32, io.read_raw(dst_ap), expected, "tensor_scalar");
  }
}

TEST(TensorScalar, SingleOperatorLeavesSecondStageAlone) {
  HostIO io;
  const auto data_ap = dense(DType::kFloat32, 0, 2, 3);
  const auto dst_ap = dense(DType::kFloat16, 0, 2, 3, 64);
  io.write(data_ap, {1, 2, 3, 4, 5, 6});
  isa::TensorScalar op{dst_ap, data_ap, AluOp::kMultiply, 0.1f, false, AluOp::kBypass,
                       99.0f,  false};
  run_op(op, io);
  expect_codes(DType::kFloat16, io.read_raw(dst_ap),
               {0.1f, 0.2f, 1 * 0.1f * 3, 0.4f, 0.5f, 6 * 0.1f}, "multiply only");
}

TEST(TensorScalar, BitwiseWithImmediateAndTensorOperand) {
  HostIO io;
  const auto data_ap = dense(DType::kInt32, 0, 2, 3);
  const auto mask_ap = dense(DType::kUInt32, 0, 2, 1, 64);
  const auto dst_ap = dense(DType::kInt32, 0, 2, 3, 128);
  io.write_words(data_ap, {-1, 0x12345678, -256, 7, 8, 9});
  io.write_words(mask_ap, {0xFFFF0000LL, 0x0000FFFFLL});
  isa::TensorScalar op{dst_ap, data_ap, AluOp::kBitwiseAnd, mask_ap, false, AluOp::kRightShift,
                       4.0f,   false};
  run_op(op, io);
  const std::vector<std::uint32_t> expected = {0xFFFF0000u >> 4, 0x12340000u >> 4, 0xFFFF0000u >> 4,
                                               7u >> 4,          8u >> 4,          9u >> 4};
  EXPECT_EQ(io.read_raw(dst_ap), expected);
}

TEST(ScalarTensorTensor, ReverseFlags) {
  constexpr std::uint32_t P = 4, F = 5;
  for (int bits = 0; bits < 4; ++bits) {
    HostIO io;
    const auto data_ap = dense(DType::kFloat32, 0, P, F, 0);
    const auto other_ap = dense(DType::kBFloat16, 0, P, F, 256);
    const auto dst_ap = dense(DType::kFloat32, 0, P, F, 512);
    io.write(data_ap, test_values(P * F, 21));
    io.write(other_ap, test_values(P * F, 22));
    const auto data = io.read(data_ap), other = io.read(other_ap);
    isa::ScalarTensorTensor op;
    op.dst = dst_ap;
    op.data = data_ap;
    op.op0 = AluOp::kDivide;
    op.operand0 = 2.5f;
    op.op1 = AluOp::kSubtract;
    op.operand1 = other_ap;
    op.reverse0 = bits & 1;
    op.reverse1 = (bits & 2) != 0;
    run_op(op, io);
    std::vector<float> expected;
    for (std::size_t i = 0; i < data.size(); ++i) {
      const float t = op.reverse0 ? ref_alu(AluOp::kDivide, 2.5f, data[i])
                                  : ref_alu(AluOp::kDivide, data[i], 2.5f);
      expected.push_back(op.reverse1 ? ref_alu(AluOp::kSubtract, other[i], t)
                                     : ref_alu(AluOp::kSubtract, t, other[i]));
    }
    expect_codes(DType::kFloat32, io.read_raw(dst_ap), expected, "scalar_tensor_tensor");
  }
}

// Reference reduction: indices of data [P, 3, 4, 5] reduced over the last `axes` dims in
// row-major order, folding left to right.
std::vector<float> ref_reduce(const std::vector<float>& data, std::uint32_t partitions,
                              std::uint32_t axes, AluOp op, bool negate) {
  const std::array<std::uint32_t, 3> shape = {3, 4, 5};
  std::uint32_t block = 1;
  for (std::uint32_t k = 3 - axes; k < 3; ++k) block *= shape[k];
  const std::uint32_t total = 60;
  std::vector<float> out;
  for (std::uint32_t p = 0; p < partitions; ++p)
    for (std::uint32_t start = 0; start < total; start += block) {
      float acc = data[p * total + start];
      if (op == AluOp::kLogicalOr) acc = acc != 0 ? 1.0f : 0.0f;
      for (std::uint32_t j = 1; j < block; ++j) acc = ref_alu(op, acc, data[p * total + start + j]);
      out.push_back(negate ? -acc : acc);
    }
  return out;
}

TEST(TensorReduce, InnermostAxesSequentialOrder) {
  constexpr std::uint32_t P = 3;
  for (std::uint32_t axes = 1; axes <= 3; ++axes) {
    for (AluOp op :
         {AluOp::kAdd, AluOp::kMultiply, AluOp::kMaximum, AluOp::kMinimum, AluOp::kLogicalOr}) {
      for (bool negate : {false, true}) {
        HostIO io;
        const auto data_ap = on_chip(DType::kFloat32, 5, P, 0, {{20, 3}, {5, 4}, {1, 5}});
        std::uint32_t kept = 1;
        const std::array<std::uint32_t, 3> shape = {3, 4, 5};
        for (std::uint32_t k = 0; k < 3 - axes; ++k) kept *= shape[k];
        const auto dst_ap = dense(DType::kFloat32, 5, P, kept, 1024);
        auto values = test_values(P * 60, 31 + axes, op != AluOp::kMultiply);
        // Values where the summation order shows: a large term cancels later.
        values[0] = 1e8f;
        values[1] = 1.0f;
        values[2] = -1e8f;
        io.write(data_ap, values);
        ASSERT_TRUE(run_op(isa::TensorReduce{dst_ap, data_ap, op, axes, negate}, io));
        expect_codes(DType::kFloat32, io.read_raw(dst_ap), ref_reduce(values, P, axes, op, negate),
                     "tensor_reduce");
      }
    }
  }
}

TEST(TensorReduce, AddIsLeftToRight) {
  HostIO io;
  const auto data_ap = dense(DType::kFloat32, 0, 1, 4);
  const auto dst_ap = dense(DType::kFloat32, 0, 1, 1, 64);
  io.write(data_ap, {1e8f, 1.0f, -1e8f, 1.0f});
  run_op(isa::TensorReduce{dst_ap, data_ap, AluOp::kAdd, 1, false}, io);
  // ((1e8 + 1) - 1e8) + 1 = 0 + 1 in fp32 (1e8 + 1 rounds back to 1e8); pairwise would give 0.
  EXPECT_EQ(io.read(dst_ap)[0], 1.0f);
}

TEST(TensorReduce, BitwiseOrOnWords) {
  HostIO io;
  const auto data_ap = dense(DType::kInt32, 0, 2, 4);
  const auto dst_ap = dense(DType::kInt32, 0, 2, 1, 64);
  io.write_words(data_ap, {1, 2, 4, -2147483648LL, 0x10, 0x10, 0x100, 0});
  run_op(isa::TensorReduce{dst_ap, data_ap, AluOp::kBitwiseOr, 1, false}, io);
  EXPECT_EQ(io.read_raw(dst_ap), (std::vector<std::uint32_t>{0x80000007u, 0x110u}));
  run_op(isa::TensorReduce{dst_ap, data_ap, AluOp::kBitwiseOr, 1, true}, io);
  EXPECT_EQ(io.read_raw(dst_ap), (std::vector<std::uint32_t>{0x7FFFFFF9u, 0xFFFFFEF0u}));
}

TEST(TensorPartitionReduce, AddAverageMaxAndBitwise) {
  constexpr std::uint32_t P = 7, F = 5;
  HostIO io(isa::Engine::kGpSimd);
  const auto data_ap = dense(DType::kBFloat16, 9, P, F);
  const auto dst_ap = dense(DType::kFloat32, 0, 1, F, 512);
  io.write(data_ap, test_values(P * F, 41));
  const auto data = io.read(data_ap);
  for (AluOp op : {AluOp::kAdd, AluOp::kAverage, AluOp::kMaximum}) {
    run_op(isa::TensorPartitionReduce{dst_ap, data_ap, op}, io);
    std::vector<float> expected;
    for (std::uint32_t i = 0; i < F; ++i) {
      float acc = data[i];
      const AluOp fold = op == AluOp::kAverage ? AluOp::kAdd : op;
      for (std::uint32_t p = 1; p < P; ++p) acc = ref_alu(fold, acc, data[p * F + i]);
      expected.push_back(op == AluOp::kAverage ? acc / 7.0f : acc);
    }
    expect_codes(DType::kFloat32, io.read_raw(dst_ap), expected, "partition reduce");
  }
  const auto int_ap = dense(DType::kUInt16, 0, 3, 2, 1024);
  const auto int_dst = dense(DType::kUInt16, 0, 1, 2, 2048);
  io.write_words(int_ap, {0x0F01, 0xFFFF, 0x00F1, 0x1234, 0xF001, 0x00FF});
  run_op(isa::TensorPartitionReduce{int_dst, int_ap, AluOp::kBitwiseOr}, io);
  EXPECT_EQ(io.read_raw(int_dst), (std::vector<std::uint32_t>{0xFFF1, 0xFFFF}));
  run_op(isa::TensorPartitionReduce{int_dst, int_ap, AluOp::kBitwiseAnd}, io);
  EXPECT_EQ(io.read_raw(int_dst), (std::vector<std::uint32_t>{0x0001, 0x0034}));
}

TEST(TensorCopy, SameDtypeIsBitExactAndCastRounds) {
  HostIO io;
  const auto src_ap = dense(DType::kFloat32, 0, 2, 3);
  const auto dst_ap = dense(DType::kFloat32, 64, 2, 3, 100 * 4);
  // A signalling-NaN payload and -0 survive a same-type copy only if it moves words.
  io.write_words(src_ap, {0x7F800001, 0x80000000, 0x3F800001, 0xFFC12345, 1, 0x7F7FFFFF});
  ASSERT_TRUE(run_op(isa::TensorCopy{dst_ap, src_ap}, io));
  EXPECT_EQ(io.read_raw(dst_ap), io.read_raw(src_ap));

  const auto bf_ap = dense(DType::kBFloat16, 3, 2, 3, 2048);
  run_op(isa::TensorCopy{bf_ap, src_ap}, io);
  const auto src = io.read(src_ap);
  expect_codes(DType::kBFloat16, io.read_raw(bf_ap), src, "fp32 -> bf16");
}

TEST(TensorTensorScan, RecurrenceWithPerPartitionInitial) {
  constexpr std::uint32_t P = 4, F = 11;
  for (auto ops :
       {std::pair{AluOp::kMultiply, AluOp::kAdd}, std::pair{AluOp::kSubtract, AluOp::kMaximum}}) {
    HostIO io;
    const auto d0_ap = dense(DType::kFloat32, 0, P, F, 0);
    const auto d1_ap = dense(DType::kBFloat16, 0, P, F, 256);
    const auto init_ap = dense(DType::kFloat32, 0, P, 1, 512);
    const auto dst_ap = dense(DType::kFloat32, 0, P, F, 1024);
    io.write(d0_ap, test_values(P * F, 51, false));
    io.write(d1_ap, test_values(P * F, 52, false));
    io.write(init_ap, {0.5f, -1.0f, 2.0f, 0.0f});
    const auto d0 = io.read(d0_ap), d1 = io.read(d1_ap), init = io.read(init_ap);
    ASSERT_TRUE(
        run_op(isa::TensorTensorScan{dst_ap, d0_ap, d1_ap, init_ap, ops.first, ops.second}, io));
    std::vector<float> expected;
    for (std::uint32_t p = 0; p < P; ++p) {
      float previous = init[p];
      for (std::uint32_t i = 0; i < F; ++i) {
        previous = ref_alu(ops.second, ref_alu(ops.first, d0[p * F + i], previous), d1[p * F + i]);
        expected.push_back(previous);
      }
    }
    expect_codes(DType::kFloat32, io.read_raw(dst_ap), expected, "scan");
  }
}

TEST(BnStats, EvenOddCountsMeansAndSquaredDeviationsThenAggregate) {
  for (std::uint32_t F : {7u, 1u, 512u}) {
    constexpr std::uint32_t P = 3;
    HostIO io;
    const auto data_ap = dense(DType::kBFloat16, 2, P, F, 0);
    const auto stats_ap = dense(DType::kFloat32, 2, P, 6, 2048);
    const auto aggr_ap = dense(DType::kFloat32, 2, P, 2, 4096);
    io.write(data_ap, test_values(P * F, 61 + F, false));
    const auto data = io.read(data_ap);
    ASSERT_TRUE(run_op(isa::BnStats{stats_ap, data_ap}, io));
    std::vector<float> expected;
    for (std::uint32_t p = 0; p < P; ++p) {
      for (std::uint32_t parity = 0; parity < 2; ++parity) {
        std::vector<float> picked;
        for (std::uint32_t i = parity; i < F; i += 2) picked.push_back(data[p * F + i]);
        float mean = 0, m2 = 0;
        if (!picked.empty()) {
          float sum = picked[0];
          for (std::size_t k = 1; k < picked.size(); ++k) sum = sum + picked[k];
          mean = sum / static_cast<float>(picked.size());
          for (std::size_t k = 0; k < picked.size(); ++k) {
            const float dev = picked[k] - mean;
            m2 = k == 0 ? dev * dev : m2 + dev * dev;
          }
        }
        expected.insert(expected.end(), {static_cast<float>(picked.size()), mean, m2});
      }
    }
    expect_codes(DType::kFloat32, io.read_raw(stats_ap), expected, "bn_stats");

    ASSERT_TRUE(run_op(isa::BnAggr{aggr_ap, stats_ap}, io));
    const auto aggr = io.read(aggr_ap);
    for (std::uint32_t p = 0; p < P; ++p) {
      double sum = 0, sq = 0;
      for (std::uint32_t i = 0; i < F; ++i) sum += data[p * F + i];
      const double mean = sum / F;
      for (std::uint32_t i = 0; i < F; ++i)
        sq += (data[p * F + i] - mean) * (data[p * F + i] - mean);
      EXPECT_NEAR(aggr[p * 2], mean, 1e-5) << "F=" << F;
      EXPECT_NEAR(aggr[p * 2 + 1], sq / F, 1e-4) << "population variance, F=" << F;
    }
  }
}

TEST(BnAggr, CombinesSeveralStatsTilesExactly) {
  HostIO io;
  const auto stats_ap = dense(DType::kFloat32, 0, 1, 9);
  const auto dst_ap = dense(DType::kFloat32, 0, 1, 2, 64);
  // Tuples (2, 1, 2), (0, 123, 5) [empty: ignored], (2, 5, 0): data {0, 2, 5, 5}.
  io.write(stats_ap, {2, 1, 2, 0, 123, 5, 2, 5, 0});
  run_op(isa::BnAggr{dst_ap, stats_ap}, io);
  const float mean = (2 * 1.0f + 2 * 5.0f) / 4.0f;
  const float m2 = (2.0f + 2 * (1 - mean) * (1 - mean)) + (0.0f + 2 * (5 - mean) * (5 - mean));
  EXPECT_EQ(io.read(dst_ap), (std::vector<float>{mean, m2 / 4.0f}));
}

TEST(Select, PredicateReverseAndPerPartitionOnFalse) {
  HostIO io;
  const auto pred_ap = dense(DType::kUInt8, 0, 2, 4);
  const auto true_ap = dense(DType::kFloat32, 0, 2, 4, 64);
  const auto false_ap = dense(DType::kFloat32, 0, 2, 1, 128);
  const auto dst_ap = dense(DType::kBFloat16, 0, 2, 4, 256);
  io.write(pred_ap, {1, 0, 255, 0, 0, 3, 0, 1});
  io.write(true_ap, {1, 2, 3, 4, 5, 6, 7, 8});
  io.write(false_ap, {-1, -2});
  for (bool reverse : {false, true}) {
    run_op(isa::Select{dst_ap, pred_ap, true_ap, false_ap, reverse}, io);
    const std::vector<float> forward = {1, -1, 3, -1, -2, 6, -2, 8};
    const std::vector<float> backward = {-1, 2, -1, 4, 5, -2, 7, -2};
    expect_codes(DType::kBFloat16, io.read_raw(dst_ap), reverse ? backward : forward, "select");
  }
}

TEST(RangeSelect, KeepsIndexRangeAndReducesMax) {
  HostIO io;
  constexpr std::uint32_t P = 3, F = 10;
  const auto true_ap = dense(DType::kFloat32, 0, P, F);
  const auto dst_ap = dense(DType::kFloat32, 0, P, F, 256);
  const auto lo_ap = dense(DType::kFloat32, 0, P, 1, 512);
  const auto hi_ap = dense(DType::kFloat32, 0, P, 1, 576);
  const auto max_ap = dense(DType::kFloat32, 0, P, 1, 640);
  const auto values = test_values(P * F, 71, false);
  io.write(true_ap, values);
  io.write(lo_ap, {2, 0, 20});
  io.write(hi_ap, {6, 100, 30});
  isa::RangeSelect op;
  op.dst = dst_ap;
  op.on_true = true_ap;
  op.comp_op0 = AluOp::kGreaterEqual;
  op.comp_op1 = AluOp::kLess;
  op.bound0 = lo_ap;
  op.bound1 = hi_ap;
  op.range_start = 3;
  op.reduce_res = max_ap;
  ASSERT_TRUE(run_op(op, io));
  const float lowest = -3.4028234663852886e38f;
  std::vector<float> expected, maxima;
  const std::array<float, 3> lo = {2, 0, 20}, hi = {6, 100, 30};
  for (std::uint32_t p = 0; p < P; ++p) {
    float m = -kInf;
    for (std::uint32_t i = 0; i < F; ++i) {
      const float index = static_cast<float>(i + 3);
      const float v = (index >= lo[p] && index < hi[p]) ? values[p * F + i] : lowest;
      expected.push_back(v);
      m = std::max(m, v);
    }
    maxima.push_back(m);
  }
  expect_codes(DType::kFloat32, io.read_raw(dst_ap), expected, "range_select");
  expect_codes(DType::kFloat32, io.read_raw(max_ap), maxima, "range_select max");
}

TEST(Iota, Int32ExactWrapsAndCastsForFloatDst) {
  HostIO io(isa::Engine::kGpSimd);
  isa::AffinePattern pattern;
  pattern.num_dims = 2;
  pattern.dims[0] = {-7, 3};
  pattern.dims[1] = {1000003, 4};
  const std::int32_t offset = 2147483000;    // wraps for several elements
  const std::int32_t multiplier = 16777217;  // not representable in fp32
  auto expected_int = [&](std::uint32_t c, std::uint32_t i, std::uint32_t j) {
    const std::int64_t exact = std::int64_t{offset} + std::int64_t{c} * multiplier -
                               7 * std::int64_t{i} + 1000003 * std::int64_t{j};
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(exact & 0xFFFFFFFF));
  };
  const auto int_ap = dense(DType::kInt32, 8, 3, 12);
  ASSERT_TRUE(run_op(isa::Iota{int_ap, pattern, offset, multiplier}, io));
  const auto words = io.read_raw(int_ap);
  for (std::uint32_t c = 0; c < 3; ++c)
    for (std::uint32_t i = 0; i < 3; ++i)
      for (std::uint32_t j = 0; j < 4; ++j)
        EXPECT_EQ(static_cast<std::int32_t>(words[c * 12 + i * 4 + j]), expected_int(c, i, j));

  const auto bf_ap = dense(DType::kBFloat16, 8, 3, 12, 1024);
  run_op(isa::Iota{bf_ap, pattern, 5, -3}, io);
  std::vector<float> expected;
  for (std::int32_t c = 0; c < 3; ++c)
    for (std::int32_t i = 0; i < 3; ++i)
      for (std::int32_t j = 0; j < 4; ++j)
        expected.push_back(static_cast<float>(5 - 3 * c - 7 * i + 1000003 * j));
  expect_codes(DType::kBFloat16, io.read_raw(bf_ap), expected, "iota bf16");
}

TEST(Memset, FillsEveryDtypeIncludingPackedZero) {
  HostIO io;
  const auto f_ap = on_chip(DType::kFloat16, 1, 2, 0, {{2, 3}});  // strided: gaps keep sentinel
  run_op(isa::Memset{f_ap, 1.0f / 3.0f}, io);
  expect_codes(DType::kFloat16, io.read_raw(f_ap), std::vector<float>(6, 1.0f / 3.0f), "memset");
  EXPECT_EQ(io.byte_at(Memory::kSbuf, 1, 2), kSentinel);
  const auto i_ap = dense(DType::kInt32, 0, 1, 2, 64);
  run_op(isa::Memset{i_ap, -5.0f}, io);
  EXPECT_EQ(io.read_raw(i_ap), (std::vector<std::uint32_t>{0xFFFFFFFBu, 0xFFFFFFFBu}));
  const auto x4_ap = dense(DType::kFloat8E4M3x4, 0, 1, 2, 128);
  run_op(isa::Memset{x4_ap, 0.0f}, io);
  EXPECT_EQ(io.read_raw(x4_ap), (std::vector<std::uint32_t>{0, 0}));
  EXPECT_THROW(run_op(isa::Memset{x4_ap, 1.0f}, io), std::invalid_argument);
}

TEST(Max8, DescendingWithDuplicatesNanAndSignedZeros) {
  HostIO io;
  const auto src_ap = dense(DType::kFloat32, 0, 2, 12);
  const auto dst_ap = dense(DType::kFloat32, 0, 2, 8, 256);
  io.write(src_ap, {3, 9,    9,     -1, 0, -0.0f, 7, 9, 2, 1, -5, 8,  //
                    1, kNaN, -kInf, 4,  4, 4,     4, 4, 4, 4, 4,  4});
  ASSERT_TRUE(run_op(isa::Max8{dst_ap, src_ap}, io));
  const auto got = io.read(dst_ap);
  const std::vector<float> row0 = {9, 9, 9, 8, 7, 3, 2, 1};
  for (int k = 0; k < 8; ++k) EXPECT_EQ(got[k], row0[k]) << k;
  EXPECT_TRUE(std::isnan(got[8]));
  for (int k = 1; k < 8; ++k) EXPECT_EQ(got[8 + k], 4.0f);
  // Zeros: ties keep source order, so +0 (index 4) precedes -0 (index 5).
  io.write(dense(DType::kFloat32, 0, 1, 12), {0, -0.0f, -1, -2, -3, -4, -5, -6, -7, -8, -9, -10});
  run_op(isa::Max8{dense(DType::kFloat32, 0, 1, 8, 256), dense(DType::kFloat32, 0, 1, 12)}, io);
  const auto zeros = io.read_raw(dense(DType::kFloat32, 0, 1, 2, 256));
  EXPECT_EQ(zeros, (std::vector<std::uint32_t>{0x00000000u, 0x80000000u}));
}

TEST(NcFindIndex8, FirstOccurrencesDuplicatesAndMisses) {
  HostIO io;
  const auto data_ap = dense(DType::kFloat32, 0, 1, 10);
  const auto vals_ap = dense(DType::kFloat32, 0, 1, 8, 64);
  io.write(data_ap, {5, 9, 5, 1, 9, 9, 2, -0.0f, kNaN, 5});
  io.write(vals_ap, {9, 9, 5, 9, 9, 0.0f, 42, kNaN});
  const std::vector<std::uint32_t> expected16 = {1, 4, 0, 5, 0xFFFF, 7, 0xFFFF, 0xFFFF};
  const auto dst16 = dense(DType::kUInt16, 0, 1, 8, 128);
  ASSERT_TRUE(run_op(isa::NcFindIndex8{dst16, data_ap, vals_ap}, io));
  EXPECT_EQ(io.read_raw(dst16), expected16);
  const auto dst32 = dense(DType::kUInt32, 0, 1, 8, 256);
  run_op(isa::NcFindIndex8{dst32, data_ap, vals_ap}, io);
  const auto got32 = io.read_raw(dst32);
  EXPECT_EQ(got32[4], 0xFFFFFFFFu);
  EXPECT_EQ(got32[3], 5u);
}

TEST(Exponential, SubtractsMaxAndSums) {
  HostIO io;
  constexpr std::uint32_t P = 2, F = 6;
  const auto src_ap = dense(DType::kBFloat16, 0, P, F);
  const auto max_ap = dense(DType::kFloat32, 0, P, 1, 64);
  const auto dst_ap = dense(DType::kFloat32, 0, P, F, 128);
  const auto sum_ap = dense(DType::kFloat32, 0, P, 1, 256);
  io.write(src_ap, {0, 1, 2, 3, -kInf, 88, -1, -2, -3, 4, 5, 6});
  io.write(max_ap, {3, 6});
  ASSERT_TRUE(run_op(isa::Exponential{dst_ap, src_ap, max_ap, sum_ap}, io));
  const auto src = io.read(src_ap);
  std::vector<float> expected;
  std::vector<float> sums(P, 0.0f);
  for (std::uint32_t p = 0; p < P; ++p)
    for (std::uint32_t i = 0; i < F; ++i) {
      const float e =
          static_cast<float>(std::exp(static_cast<double>(src[p * F + i] - (p ? 6.0f : 3.0f))));
      expected.push_back(e);
      sums[p] = i == 0 ? e : sums[p] + e;
    }
  expect_codes(DType::kFloat32, io.read_raw(dst_ap), expected, "exp");
  expect_codes(DType::kFloat32, io.read_raw(sum_ap), sums, "exp sum");
}

TEST(Reciprocal, CorrectlyRoundedWithSpecials) {
  HostIO io;
  const auto src_ap = dense(DType::kFloat32, 0, 1, 6);
  const auto dst_ap = dense(DType::kFloat32, 0, 1, 6, 64);
  io.write(src_ap, {0.0f, -0.0f, kInf, 3.0f, 1e-40f, kNaN});
  run_op(isa::Reciprocal{dst_ap, src_ap}, io);
  const auto got = io.read(dst_ap);
  EXPECT_EQ(got[0], kInf);
  EXPECT_EQ(got[1], -kInf);
  EXPECT_EQ(got[2], 0.0f);
  EXPECT_EQ(got[3], static_cast<float>(1.0 / 3.0));
  EXPECT_EQ(got[4], kInf);  // 1 / 1e-40 overflows fp32
  EXPECT_TRUE(std::isnan(got[5]));
}

// Reference activation functions, written with other identities where one exists.
double ref_activation(ActivationFunc f, double x) {
  const double pi = std::acos(-1.0);
  switch (f) {
    case ActivationFunc::kCopy:
      return x;
    case ActivationFunc::kExp:
      return std::exp(x);
    case ActivationFunc::kLog:
      return std::log(x);
    case ActivationFunc::kTanh:
      return std::tanh(x);
    case ActivationFunc::kSigmoid:
      return x < 0 ? std::exp(x) / (1.0 + std::exp(x)) : 1.0 / (1.0 + std::exp(-x));
    case ActivationFunc::kRelu:
      return std::isnan(x) ? x : std::max(x, 0.0);
    case ActivationFunc::kGelu:
      return x * 0.5 * std::erfc(-x * 0.70710678118654752440);
    case ActivationFunc::kGeluApprxTanh:
      return x / (1.0 + std::exp(-2.0 * std::sqrt(2.0 / pi) * (x + 0.044715 * std::pow(x, 3))));
    case ActivationFunc::kGeluApprxSigmoid:
      return x / (1.0 + std::exp(-1.702 * x));
    case ActivationFunc::kSilu:
      return x / (1.0 + std::exp(-x));
    case ActivationFunc::kSoftplus:
      return x > 30 ? x + std::exp(-x) : std::log1p(std::exp(x));
    case ActivationFunc::kMish: {
      const double sp = x > 30 ? x + std::exp(-x) : std::log1p(std::exp(x));
      return x * std::tanh(sp);
    }
    case ActivationFunc::kErf:
      return 1.0 - std::erfc(x);
    case ActivationFunc::kSqrt:
      return std::sqrt(x);
    case ActivationFunc::kRsqrt:
      return 1.0 / std::sqrt(x);
    case ActivationFunc::kSquare:
      return x * x;
    case ActivationFunc::kReciprocal:
      return 1.0 / x;
    case ActivationFunc::kSin:
      return std::fabs(x) <= 3.14159274 ? std::sin(x) : std::nan("");
    case ActivationFunc::kCos:
      return std::cos(x);
    case ActivationFunc::kArctan:
      return std::fabs(x) <= 1.57079637 ? std::atan(x) : std::nan("");
    case ActivationFunc::kAbs:
      return std::fabs(x);
    case ActivationFunc::kSign:
      return x > 0 ? 1.0 : (x < 0 ? -1.0 : x);
  }
  return std::nan("");
}

// Distance in units in the last place between two fp32 values of the same sign.
std::int64_t ulp_distance(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return (std::isnan(a) && std::isnan(b)) ? 0 : 1 << 30;
  if (a == b) return 0;
  auto ordered = [](float v) {
    const auto bits = static_cast<std::int64_t>(std::bit_cast<std::uint32_t>(v));
    return bits & 0x80000000 ? 0x80000000 - bits : bits;
  };
  return std::abs(ordered(a) - ordered(b));
}

TEST(Activation, EveryFunctionWithScaleBiasAndReduce) {
  constexpr std::uint32_t P = 3, F = 40;
  const std::vector<ActivationFunc> funcs = {
      ActivationFunc::kCopy,   ActivationFunc::kExp,           ActivationFunc::kLog,
      ActivationFunc::kTanh,   ActivationFunc::kSigmoid,       ActivationFunc::kRelu,
      ActivationFunc::kGelu,   ActivationFunc::kGeluApprxTanh, ActivationFunc::kGeluApprxSigmoid,
      ActivationFunc::kSilu,   ActivationFunc::kSoftplus,      ActivationFunc::kMish,
      ActivationFunc::kErf,    ActivationFunc::kSqrt,          ActivationFunc::kRsqrt,
      ActivationFunc::kSquare, ActivationFunc::kReciprocal,    ActivationFunc::kSin,
      ActivationFunc::kCos,    ActivationFunc::kArctan,        ActivationFunc::kAbs,
      ActivationFunc::kSign};
  const std::array<float, P> scales = {1.0f, -0.75f, 2.0f};
  for (ActivationFunc func : funcs) {
    HostIO io(isa::Engine::kScalar);
    const auto data_ap = dense(DType::kFloat32, 4, P, F);
    const auto scale_ap = dense(DType::kFloat32, 4, P, 1, 512);
    const auto dst_ap = dense(DType::kFloat32, 4, P, F, 1024);
    const auto sum_ap = dense(DType::kFloat32, 4, P, 1, 2048);
    auto inputs = test_values(P * F, 81);
    for (std::size_t i = 0; i < inputs.size(); i += 4) inputs[i] *= 6.0f;  // reach the tails
    io.write(data_ap, inputs);
    io.write(scale_ap, {scales[0], scales[1], scales[2]});
    const auto data = io.read(data_ap);
    isa::Activation op{dst_ap, data_ap, func, scale_ap, 0.25f, sum_ap};
    ASSERT_TRUE(run_op(op, io));
    const auto got = io.read(dst_ap);
    const auto sums = io.read(sum_ap);
    const bool exact = func == ActivationFunc::kCopy || func == ActivationFunc::kRelu ||
                       func == ActivationFunc::kAbs || func == ActivationFunc::kSign ||
                       func == ActivationFunc::kSquare || func == ActivationFunc::kReciprocal ||
                       func == ActivationFunc::kSqrt;
    for (std::uint32_t p = 0; p < P; ++p) {
      float sum = 0;
      for (std::uint32_t i = 0; i < F; ++i) {
        const float pre = data[p * F + i] * scales[p] + 0.25f;
        const float want = static_cast<float>(ref_activation(func, pre));
        EXPECT_LE(ulp_distance(got[p * F + i], want), exact ? 0 : 1)
            << isa::activation_name(func) << "(" << pre << "): got " << got[p * F + i] << " want "
            << want;
        sum = i == 0 ? got[p * F + i] : sum + got[p * F + i];
      }
      EXPECT_EQ(ulp_distance(sums[p], sum), 0) << isa::activation_name(func) << " reduce";
    }
  }
}

TEST(Activation, SinOutsideItsRangeIsNan) {
  HostIO io(isa::Engine::kScalar);
  const auto data_ap = dense(DType::kFloat32, 0, 1, 4);
  const auto dst_ap = dense(DType::kFloat32, 0, 1, 4, 64);
  io.write(data_ap, {3.14159274f, -3.14159274f, 9.0f, 3.2f});
  run_op(isa::Activation{dst_ap, data_ap, ActivationFunc::kSin, 1.0f, 0.0f, std::nullopt}, io);
  const auto got = io.read(dst_ap);
  EXPECT_NEAR(got[0], 0.0f, 1e-6f);
  EXPECT_NEAR(got[1], 0.0f, 1e-6f);
  EXPECT_TRUE(std::isnan(got[2]));
  EXPECT_TRUE(std::isnan(got[3]));
}

TEST(AffineSelect, CausalMask) {
  HostIO io(isa::Engine::kGpSimd);
  constexpr std::uint32_t P = 4, F = 6;
  const auto true_ap = dense(DType::kFloat32, 0, P, F);
  const auto dst_ap = dense(DType::kBFloat16, 0, P, F, 256);
  const auto values = test_values(P * F, 91, false);
  io.write(true_ap, values);
  isa::AffinePattern pattern;
  pattern.num_dims = 1;
  pattern.dims[0] = {-1, F};
  // keep where c - i >= 0 (lower triangle), else -1e4.
  ASSERT_TRUE(
      run_op(isa::AffineSelect{dst_ap, true_ap, pattern, 0, 1, AluOp::kGreaterEqual, -1e4f}, io));
  std::vector<float> expected;
  for (std::uint32_t c = 0; c < P; ++c)
    for (std::uint32_t i = 0; i < F; ++i) expected.push_back(i <= c ? values[c * F + i] : -1e4f);
  expect_codes(DType::kBFloat16, io.read_raw(dst_ap), expected, "affine_select");
}

TEST(LocalGather, PerCorePartitionFirstIndices) {
  HostIO io(isa::Engine::kGpSimd);
  constexpr std::uint32_t P = 32, F = 20, kIdx = 2, kPer = 2;
  const auto src_ap = dense(DType::kBFloat16, 0, P, F);
  const auto index_ap = dense(DType::kUInt16, 0, P, kIdx, 1024);
  // 24 of the 32 indices per core are used (NKI num_valid_indices = 24).
  constexpr std::uint32_t kUsed = 24;
  const auto dst_ap = dense(DType::kBFloat16, 0, P, kUsed * kPer, 2048);
  std::vector<std::int64_t> src(P * F), index(P * kIdx);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::int64_t>(0x3F00 + i);
  for (std::size_t i = 0; i < index.size(); ++i)
    index[i] = static_cast<std::int64_t>((i * 7) % (F - 1));
  io.write_words(src_ap, src);
  io.write_words(index_ap, index);
  ASSERT_TRUE(run_op(isa::LocalGather{dst_ap, src_ap, index_ap, kPer}, io));
  const auto got = io.read_raw(dst_ap);
  for (std::uint32_t p = 0; p < P; ++p) {
    const std::uint32_t core = p / 16;
    for (std::uint32_t k = 0; k < kUsed; ++k) {
      // k-th index of the core: column k / 16 of partition core*16 + k % 16.
      const auto v = static_cast<std::uint32_t>(index[(core * 16 + k % 16) * kIdx + k / 16]);
      for (std::uint32_t j = 0; j < kPer; ++j)
        EXPECT_EQ(got[p * kUsed * kPer + k * kPer + j],
                  static_cast<std::uint32_t>(src[p * F + v + j]))
            << p << " " << k;
    }
  }
  index[5] = F - 1;  // its second element would be beyond the partition
  io.write_words(index_ap, index);
  EXPECT_THROW(run_op(isa::LocalGather{dst_ap, src_ap, index_ap, kPer}, io), std::out_of_range);
}

TEST(NcStreamShuffle, QuadrantMaskAndKeep) {
  HostIO io;
  constexpr std::uint32_t P = 64, F = 3;
  const auto src_ap = dense(DType::kFloat32, 0, P, F);
  const auto dst_ap = dense(DType::kFloat32, 64, P, F, 512);
  std::vector<std::int64_t> src(P * F);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::int64_t>(i + 1);
  io.write_words(src_ap, src);
  isa::NcStreamShuffle op{dst_ap, src_ap, {}};
  for (std::uint32_t i = 0; i < 32; ++i) op.mask[i] = static_cast<std::uint8_t>(31 - i);
  op.mask[3] = 255;
  op.mask[4] = 255;
  op.mask[10] = 0;
  ASSERT_TRUE(run_op(op, io));
  const auto got = io.read_raw(dst_ap);
  const std::uint32_t sentinel_word = 0xA5A5A5A5u;
  for (std::uint32_t d = 0; d < P; ++d) {
    const std::uint8_t m = op.mask[d % 32];
    for (std::uint32_t f = 0; f < F; ++f) {
      const std::uint32_t want =
          m == 255 ? sentinel_word : static_cast<std::uint32_t>(src[((d / 32) * 32 + m) * F + f]);
      EXPECT_EQ(got[d * F + f], want) << "dst partition " << d;
    }
  }
}

TEST(NcTranspose, VectorEngineTransposesWordsTensorEngineIsNotOurs) {
  HostIO io(isa::Engine::kVector);
  const auto data_ap = dense(DType::kBFloat16, 0, 3, 5);
  const auto dst_ap = dense(DType::kBFloat16, 0, 5, 3, 512);
  std::vector<std::int64_t> words(15);
  for (std::size_t i = 0; i < words.size(); ++i) words[i] = static_cast<std::int64_t>(0x7F81 + i);
  io.write_words(data_ap, words);
  ASSERT_TRUE(run_op(isa::NcTranspose{dst_ap, data_ap}, io));
  const auto got = io.read_raw(dst_ap);
  for (std::uint32_t p = 0; p < 3; ++p)
    for (std::uint32_t i = 0; i < 5; ++i) EXPECT_EQ(got[i * 3 + p], words[p * 5 + i]);
  HostIO tensor_io(isa::Engine::kTensor);
  EXPECT_FALSE(run_op(isa::NcTranspose{dst_ap, data_ap}, tensor_io));
}

// Marsaglia's xorwow, written as in the paper.
struct ReferenceXorwow {
  std::uint32_t x, y, z, w, v, d;
  std::uint32_t next() {
    const std::uint32_t t = x ^ (x >> 2);
    x = y;
    y = z;
    z = w;
    w = v;
    v = (v ^ (v << 4)) ^ (t ^ (t << 1));
    d += 362437;
    return d + v;
  }
};

TEST(Rand2, XorwowUniformAndStateRoundTrip) {
  for (std::size_t generators : {std::size_t{1}, std::size_t{4}}) {
    HostIO io(isa::Engine::kVector, generators);
    constexpr std::uint32_t P = 3, F = 10;
    const std::uint32_t words = static_cast<std::uint32_t>(6 * generators);
    const auto seeds_ap = dense(DType::kUInt32, 5, P, words, 0);
    std::vector<std::int64_t> seeds(P * words);
    for (std::size_t i = 0; i < seeds.size(); ++i)
      seeds[i] = static_cast<std::int64_t>(123456789u * (i + 3));
    io.write_words(seeds_ap, seeds);
    ASSERT_TRUE(run_op(isa::RandSetState{seeds_ap}, io));
    const auto dst_ap = dense(DType::kFloat32, 5, P, F, 1024);
    ASSERT_TRUE(run_op(isa::Rand2{dst_ap, -2.0f, 3.0f}, io));
    const auto got = io.read(dst_ap);
    std::vector<ReferenceXorwow> reference;
    for (std::uint32_t p = 0; p < P; ++p)
      for (std::size_t g = 0; g < generators; ++g) {
        auto s = [&](std::size_t k) {
          return static_cast<std::uint32_t>(seeds[p * words + g * 6 + k]);
        };
        reference.push_back({s(0), s(1), s(2), s(3), s(4), s(5)});
      }
    for (std::uint32_t p = 0; p < P; ++p)
      for (std::uint32_t i = 0; i < F; ++i) {
        const std::uint32_t bits = reference[p * generators + i % generators].next();
        const float unit = static_cast<float>(bits / 256u) / 16777216.0f;
        const float want = -2.0f + 5.0f * unit;
        EXPECT_EQ(got[p * F + i], want);
        EXPECT_GE(got[p * F + i], -2.0f);
        EXPECT_LT(got[p * F + i], 3.0f);
      }
    const auto state_ap = dense(DType::kUInt32, 5, P, words, 2048);
    ASSERT_TRUE(run_op(isa::RandGetState{state_ap}, io));
    const auto state = io.read_raw(state_ap);
    for (std::uint32_t p = 0; p < P; ++p)
      for (std::size_t g = 0; g < generators; ++g) {
        const auto& r = reference[p * generators + g];
        const std::array<std::uint32_t, 6> want = {r.x, r.y, r.z, r.w, r.v, r.d};
        for (std::size_t k = 0; k < 6; ++k) EXPECT_EQ(state[p * words + g * 6 + k], want[k]);
      }
    // Lanes outside the instruction's partitions were not touched.
    EXPECT_EQ(io.rng(isa::Engine::kVector)[0],
              0x9E3779B9u * 1 + static_cast<unsigned>(isa::Engine::kVector));
  }
}

// E4M3/E5M2 nearest code by enumerating every code (ties to even code), saturating.
std::uint8_t nearest_code(DType element, float x) {
  std::uint8_t best = 0;
  double best_error = std::numeric_limits<double>::infinity();
  for (int code = 0; code < 256; ++code) {
    const float value = numerics::decode(element, static_cast<std::uint32_t>(code));
    if (!std::isfinite(value)) continue;
    const double error = std::fabs(static_cast<double>(value) - x);
    if (error < best_error ||
        (error == best_error && (code & 1) == 0 && std::signbit(value) == std::signbit(x))) {
      best_error = error;
      best = static_cast<std::uint8_t>(code);
    }
  }
  return best;
}

TEST(QuantizeMx, TrainiumScaleAndHardwareLayout) {
  for (DType packed : {DType::kFloat8E4M3x4, DType::kFloat8E5M2x4}) {
    const DType element = packed == DType::kFloat8E4M3x4 ? DType::kFloat8E4M3 : DType::kFloat8E5M2;
    const int emax = element == DType::kFloat8E4M3 ? 8 : 15;
    HostIO io;
    constexpr std::uint32_t P = 64, F = 8, W = F / 4;
    const auto src_ap = dense(DType::kBFloat16, 0, P, F);
    const auto dst_ap = dense(packed, 0, P, W, 1024);
    const auto scale_ap = dense(DType::kUInt8, 0, P, W, 2048);
    auto values = test_values(P * F, 101, false);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] *= static_cast<float>(1 << (i % 7));
    // Block (quadrant 1, s = 2, word 1) is all zeros.
    for (std::uint32_t r = 0; r < 8; ++r)
      for (std::uint32_t e = 0; e < 4; ++e) values[(32 + 16 + r) * F + 4 + e] = 0.0f;
    io.write(src_ap, values);
    const auto src = io.read(src_ap);
    ASSERT_TRUE(run_op(isa::QuantizeMx{dst_ap, src_ap, scale_ap}, io));
    const auto words = io.read_raw(dst_ap);
    for (std::uint32_t q = 0; q < 2; ++q)
      for (std::uint32_t s = 0; s < 4; ++s)
        for (std::uint32_t j = 0; j < W; ++j) {
          float amax = 0;
          for (std::uint32_t r = 0; r < 8; ++r)
            for (std::uint32_t e = 0; e < 4; ++e)
              amax = std::max(amax, std::fabs(src[(q * 32 + s * 8 + r) * F + 4 * j + e]));
          int exponent = -127;
          if (amax > 0) exponent = std::ilogb(amax) - (emax - 1);
          const auto scale_code = static_cast<std::uint8_t>(exponent + 127);
          EXPECT_EQ(io.byte_at(Memory::kSbuf, q * 32 + s, 2048 + j), scale_code) << q << s << j;
          const double scale = std::ldexp(1.0, exponent);
          for (std::uint32_t r = 0; r < 8; ++r)
            for (std::uint32_t e = 0; e < 4; ++e) {
              const std::uint32_t p = q * 32 + s * 8 + r;
              const float scaled = static_cast<float>(src[p * F + 4 * j + e] / scale);
              const std::uint32_t lane = (words[p * W + j] >> (8 * e)) & 0xFF;
              EXPECT_EQ(numerics::decode(element, lane),
                        numerics::decode(element, nearest_code(element, scaled)))
                  << "partition " << p << " element " << 4 * j + e;
            }
        }
    // Scale partitions 4..31 of each quadrant are left alone.
    for (std::uint32_t p : {4u, 20u, 31u, 36u, 63u})
      EXPECT_EQ(io.byte_at(Memory::kSbuf, p, 2048), kSentinel);
  }
}

TEST(Dispatch, ExecutorOperationsAreNotOurs) {
  HostIO io;
  EXPECT_FALSE(run_op(isa::NcMatmul{}, io));
  EXPECT_FALSE(run_op(isa::CustomOp{}, io));
  EXPECT_FALSE(run_op(isa::DmaCopy{}, io));
  EXPECT_FALSE(run_op(isa::SemaphoreOp{}, io));
}

}  // namespace
}  // namespace trnsim::sim
