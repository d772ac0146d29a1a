// The collectives whose sizes are data (all_gather_v, all_to_all_v: counts and displacements
// in a uint32 metadata tensor read when the call runs) and the ring permute that sends a
// reduction (collective_permute_implicit_reduce), inside kernels launched on ranks of a chip.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "arch/arch.h"
#include "kernel/collectives.h"
#include "kernel/kernel.h"
#include "runtime/runtime.h"

namespace trnsim::runtime {
namespace {

using kernel::Tensor;

constexpr int kVariableRanks = 4;
constexpr std::int64_t kFlatElements = 64;  // each rank's src and dst: [1, 64] fp32

HostTensor flat_input(int rank) {
  std::vector<float> v(kFlatElements);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(1000 * rank + i);
  return HostTensor::from_floats("x", DType::kFloat32, {1, kFlatElements}, v);
}

// A uint32 metadata tensor of `rows` rows of kVariableRanks columns.
HostTensor metadata(const std::vector<std::vector<std::uint32_t>>& rows) {
  std::vector<std::uint8_t> bytes;
  for (const auto& row : rows) {
    EXPECT_EQ(row.size(), static_cast<std::size_t>(kVariableRanks));
    const auto* p = reinterpret_cast<const std::uint8_t*>(row.data());
    bytes.insert(bytes.end(), p, p + row.size() * sizeof(std::uint32_t));
  }
  return HostTensor("meta", DType::kUInt32,
                    {static_cast<std::int64_t>(rows.size()), kVariableRanks}, std::move(bytes));
}

std::vector<std::uint32_t> words(const HostTensor& t) {
  std::vector<std::uint32_t> w(t.bytes().size() / sizeof(std::uint32_t));
  std::memcpy(w.data(), t.bytes().data(), t.bytes().size());
  return w;
}

// dst starts as -1 everywhere (what no chunk writes keeps), then the collective runs; the
// kernel returns dst and the metadata after the call.
template <bool kGather, bool kRdispls, bool kCountsKnown = false>
std::vector<Tensor> variable_exchange(std::span<const Tensor> in) {
  Tensor dst = nl::ndarray({1, kFlatElements}, DType::kFloat32, nl::shared_hbm, "dst");
  Tensor fill = nl::ndarray({1, kFlatElements}, DType::kFloat32, nl::sbuf, "fill");
  nisa::memset(fill, -1.0f);
  nl::store(dst, fill);
  Tensor meta = nl::ndarray(in[1].shape(), DType::kUInt32, nl::shared_hbm, "meta_out");
  nisa::dma_copy(meta, in[1]);
  if constexpr (kGather)
    ncc::all_gather_v({in[0]}, {dst}, {}, meta, kCountsKnown, kRdispls);
  else
    ncc::all_to_all_v({in[0]}, {dst}, {}, meta, kCountsKnown, kRdispls);
  return {dst, meta};
}

RanksResult run_variable(const kernel::KernelFn& fn,
                         const std::vector<HostTensor>& metadata_per_rank) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  std::vector<std::vector<HostTensor>> inputs;
  for (int r = 0; r < kVariableRanks; ++r)
    inputs.push_back({flat_input(r), metadata_per_rank[static_cast<std::size_t>(r)]});
  const BuiltKernel built = build(fn, std::vector{inputs[0][0].spec(), inputs[0][1].spec()}, chip);
  return launch_ranks(built, chip, inputs);
}

// Rank s sends 2 s + r + 1 elements to rank r, from offset 10 r of its src (counts that tell
// sender from receiver); row 2 starts as 77s.
std::vector<HostTensor> asymmetric_metadata() {
  std::vector<HostTensor> meta;
  for (std::uint32_t s = 0; s < kVariableRanks; ++s)
    meta.push_back(metadata(
        {{2 * s + 1, 2 * s + 2, 2 * s + 3, 2 * s + 4}, {0, 10, 20, 30}, {77, 77, 77, 77}}));
  return meta;
}

std::size_t sent(std::size_t from, std::size_t to) {
  return 2 * from + to + 1;
}

TEST(VariableCollectives, AllToAllVMovesEachPairsCountIntoEqualSlots) {
  const RanksResult r = run_variable(variable_exchange<false, false>, asymmetric_metadata());
  const std::size_t slot = kFlatElements / kVariableRanks;
  for (std::size_t k = 0; k < kVariableRanks; ++k) {
    const std::vector<float> dst = r.ranks[k].outputs.at(0).to_floats();
    std::vector<float> expected(kFlatElements, -1.0f);
    for (std::size_t s = 0; s < kVariableRanks; ++s)
      for (std::size_t i = 0; i < sent(s, k); ++i)
        expected[s * slot + i] = static_cast<float>(1000 * s + 10 * k + i);
    EXPECT_EQ(dst, expected) << "rank " << k;
    // Row 2 now holds what each sender sent here; rows 0 and 1 are as they were.
    const std::vector<std::uint32_t> m = words(r.ranks[k].outputs.at(1));
    for (std::uint32_t s = 0; s < kVariableRanks; ++s)
      EXPECT_EQ(m[2 * kVariableRanks + s], sent(s, k)) << "rank " << k << " from " << s;
    EXPECT_EQ(m[0], 2 * k + 1);
  }
}

TEST(VariableCollectives, RecvCountsKnownLeavesTheMetadataAlone) {
  const std::vector<HostTensor> meta = asymmetric_metadata();
  const RanksResult r = run_variable(variable_exchange<false, false, true>, meta);
  for (std::size_t k = 0; k < kVariableRanks; ++k)
    EXPECT_EQ(words(r.ranks[k].outputs.at(1)), words(meta[k])) << "rank " << k;
  const RanksResult filled = run_variable(variable_exchange<false, false>, meta);
  EXPECT_EQ(r.ranks[1].outputs.at(0).to_floats(), filled.ranks[1].outputs.at(0).to_floats());
}

TEST(VariableCollectives, AllGatherVFillsEachSendersSlot) {
  // Rank s broadcasts s + 2 elements from offset 5 s (only the first column is read).
  std::vector<HostTensor> meta;
  for (std::uint32_t s = 0; s < kVariableRanks; ++s)
    meta.push_back(metadata({{s + 2, 99, 99, 99}, {5 * s, 99, 99, 99}, {0, 0, 0, 0}}));
  const RanksResult r = run_variable(variable_exchange<true, false>, meta);
  const std::size_t slot = kFlatElements / kVariableRanks;
  std::vector<float> expected(kFlatElements, -1.0f);
  for (std::size_t s = 0; s < kVariableRanks; ++s)
    for (std::size_t i = 0; i < s + 2; ++i)
      expected[s * slot + i] = static_cast<float>(1000 * s + 5 * s + i);
  for (std::size_t k = 0; k < kVariableRanks; ++k) {
    EXPECT_EQ(r.ranks[k].outputs.at(0).to_floats(), expected) << "rank " << k;
    const std::vector<std::uint32_t> m = words(r.ranks[k].outputs.at(1));
    for (std::uint32_t s = 0; s < kVariableRanks; ++s)
      EXPECT_EQ(m[2 * kVariableRanks + s], s + 2) << "rank " << k << " from " << s;
  }
}

TEST(VariableCollectives, AllGatherVSendsOneChunkToEveryRankAtItsDisplacement) {
  // Rank s broadcasts 3 elements from offset s; the receivers place rank s's at 16 (3 - s).
  std::vector<HostTensor> meta;
  for (std::uint32_t s = 0; s < kVariableRanks; ++s)
    meta.push_back(metadata({{3, 99, 99, 99}, {s, 99, 99, 99}, {0, 0, 0, 0}, {48, 32, 16, 0}}));
  const RanksResult r = run_variable(variable_exchange<true, true>, meta);
  for (std::size_t k = 0; k < kVariableRanks; ++k) {
    std::vector<float> expected(kFlatElements, -1.0f);
    for (std::size_t s = 0; s < kVariableRanks; ++s)
      for (std::size_t i = 0; i < 3; ++i)
        expected[16 * (3 - s) + i] = static_cast<float>(1000 * s + s + i);
    EXPECT_EQ(r.ranks[k].outputs.at(0).to_floats(), expected) << "rank " << k;
    const std::vector<std::uint32_t> m = words(r.ranks[k].outputs.at(1));
    for (std::size_t s = 0; s < kVariableRanks; ++s) EXPECT_EQ(m[2 * kVariableRanks + s], 3u);
  }
  ASSERT_EQ(r.collectives.size(), 1u);
  EXPECT_EQ(r.collectives[0].kind, isa::CollectiveKind::kAllGatherV);
  EXPECT_EQ(r.collectives[0].bytes, static_cast<std::uint64_t>(kFlatElements) * 4);
}

// Bad counts are run-time errors at the kernel's line: they are data.
TEST(VariableCollectives, CountsBeyondABufferOrASlotAreErrorsAtTheKernelLine) {
  const auto expect_error = [](const std::vector<HostTensor>& meta, const std::string& words) {
    try {
      (void)run_variable(variable_exchange<false, false>, meta);
      FAIL() << "expected a SimError mentioning " << words;
    } catch (const sim::SimError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("collectives_v_test.cpp"), std::string::npos) << what;
      EXPECT_NE(what.find(words), std::string::npos) << what;
    }
  };
  std::vector<HostTensor> beyond_src, beyond_slot;
  for (std::uint32_t s = 0; s < kVariableRanks; ++s) {
    beyond_src.push_back(metadata({{1, 1, 1, 1}, {0, 0, 0, s == 2 ? 64u : 0u}, {0, 0, 0, 0}}));
    beyond_slot.push_back(metadata({{1, 17, 1, 1}, {0, 0, 0, 0}, {0, 0, 0, 0}}));
  }
  expect_error(beyond_src, "rank 2 sends elements [64, 65) to rank 3, but its src holds 64");
  expect_error(beyond_slot, "sends 17 elements to rank 1, whose dst has slots of 16");
  std::vector<HostTensor> overlapping;
  for (std::uint32_t s = 0; s < kVariableRanks; ++s)
    overlapping.push_back(metadata({{4, 4, 4, 4}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 2, 20, 40}}));
  try {
    (void)run_variable(variable_exchange<false, true>, overlapping);
    FAIL() << "expected a SimError";
  } catch (const sim::SimError& e) {
    EXPECT_NE(std::string(e.what()).find("chunks of ranks 0 and 1 at overlapping elements"),
              std::string::npos)
        << e.what();
  }
}

// A metadata tensor of the wrong shape is a tracing error.
std::vector<Tensor> two_row_metadata(std::span<const Tensor> in) {
  Tensor dst = nl::ndarray({1, kFlatElements}, DType::kFloat32, nl::shared_hbm, "dst");
  Tensor meta = nl::ndarray({2, kVariableRanks}, DType::kUInt32, nl::hbm, "meta");
  ncc::all_to_all_v({in[0]}, {dst}, ncc::ReplicaGroup{{{0, 1, 2, 3}}}, meta);
  return {dst};
}

TEST(VariableCollectives, MetadataOfTheWrongShapeIsATracingError) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  try {
    (void)build(two_row_metadata, std::vector{flat_input(0).spec()}, chip);
    FAIL() << "expected a KernelError";
  } catch (const kernel::KernelError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("collectives_v_test.cpp"), std::string::npos) << what;
    EXPECT_NE(what.find("metadata_tensor is [2, 4] in private_hbm; it is (3, 4)"),
              std::string::npos)
        << what;
  }
}

// Each rank sends max(a, b) of its two tiles to the next rank of its pair ring.
std::vector<Tensor> send_the_larger(std::span<const Tensor> in) {
  Tensor b = nl::ndarray(in[0].shape(), in[0].dtype(), nl::hbm, "b");
  Tensor t = nl::load(in[0]);
  Tensor flipped = nl::ndarray(in[0].shape(), in[0].dtype(), nl::sbuf, "flipped");
  nisa::tensor_scalar(flipped, t, isa::AluOp::kMultiply, -1.0f);
  nl::store(b, flipped);
  Tensor out = nl::ndarray(in[0].shape(), in[0].dtype(), nl::shared_hbm, "out");
  ncc::collective_permute_implicit_reduce(
      {{in[0]}}, {{b}}, {{out}}, ncc::ReplicaGroup{{{0, 1}, {2, 3}}}, isa::AluOp::kMaximum);
  return {out};
}

TEST(VariableCollectives, PermuteImplicitReduceSendsTheReductionAroundTheRing) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  std::vector<std::vector<HostTensor>> inputs;
  for (int r = 0; r < kVariableRanks; ++r) {
    std::vector<float> v(32);
    for (std::size_t i = 0; i < v.size(); ++i)
      v[i] = static_cast<float>((i % 2 == 0 ? 1 : -1) * (10 * r + static_cast<int>(i)));
    inputs.push_back({HostTensor::from_floats("x", DType::kFloat32, {4, 8}, v)});
  }
  const BuiltKernel built = build(send_the_larger, std::vector{inputs[0][0].spec()}, chip);
  const RanksResult r = launch_ranks(built, chip, inputs);
  for (int k = 0; k < kVariableRanks; ++k) {
    const int from = k ^ 1;  // the other rank of its pair
    std::vector<float> expected;
    for (const float x : inputs[static_cast<std::size_t>(from)][0].to_floats())
      expected.push_back(std::max(x, -x));
    EXPECT_EQ(r.ranks[static_cast<std::size_t>(k)].outputs.at(0).to_floats(), expected)
        << "rank " << k;
  }
  ASSERT_EQ(r.collectives.size(), 2u);  // one per pair
  EXPECT_EQ(r.collectives[0].kind, isa::CollectiveKind::kPermuteReduce);
}

}  // namespace
}  // namespace trnsim::runtime
