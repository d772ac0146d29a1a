// Validation rules of local_gather, nc_stream_shuffle, custom_op, the random-number
// operations and the GpSimd index operations (sequence_bounds, nonzero_with_count,
// nc_n_gather, topk) (listed, with their sources, in docs/isa.md "Validation rules").
#include <fmt/format.h>

#include "isa/validate_detail.h"

namespace trnsim::isa::validate_detail {

namespace {

constexpr std::uint64_t kLocalGatherIndicesPerCore = 4096;
constexpr std::uint32_t kTopkMinN = 8;  // ISA: 8 <= n < 65536
constexpr std::uint32_t kTopkMaxN = 65535;
constexpr std::uint64_t kTopkMaxK = 32767;  // ISA: 1 <= K < 32768

// XORWOW state: 6 uint32 per partition on GpSimd, 24 (4 states) on Vector (ISA).
void check_rng_state(Checker& c, std::string_view name, const AccessPattern& ap,
                     std::string_view mnemonic) {
  c.require_generation(Generation::kGen3, std::string(mnemonic));
  if (c.engine == Engine::kVector) {
    c.require_generation(Generation::kGen4, fmt::format("{} on the vector engine", mnemonic));
  }
  c.require_dtype(name, ap, {DType::kUInt32});
  c.require_free(name, ap, c.engine == Engine::kVector ? 24 : 6,
                 fmt::format("the {} engine's XORWOW state", engine_name(c.engine)));
}

}  // namespace

void check_op(Checker& c, const LocalGather& op) {
  for (const auto& [name, ap] :
       {std::pair{"dst", &op.dst}, std::pair{"src", &op.src}, std::pair{"index", &op.index}})
    c.require_core_groups(name, *ap, "local_gather", "one GpSimd core each");
  c.require_partitions("src", op.src, op.dst.partitions, "local_gather");
  c.require_partitions("index", op.index, op.dst.partitions, "local_gather");
  c.require_dtype("index", op.index, {DType::kUInt16});
  c.require_same_dtype("dst", op.dst, "src", op.src, "local_gather does not cast");
  const std::uint32_t n = op.num_elem_per_idx;
  if (n == 0 || n > 32 || (n & (n - 1)) != 0) {
    c.add("num_elem_per_idx", fmt::format("{} is not one of 1, 2, 4, 8, 16, 32", n));
  }
  const std::uint64_t indices = op.index.free_elements();
  if (indices * kGpSimdPartitionsPerCore > kLocalGatherIndicesPerCore) {
    c.add("index", fmt::format("{} indices per GpSimd core exceed the limit {}",
                               indices * kGpSimdPartitionsPerCore, kLocalGatherIndicesPerCore));
  }
  c.require_free("dst", op.dst, indices * n, "index elements x num_elem_per_idx");
}

void check_op(Checker& c, const NcStreamShuffle& op) {
  for (std::size_t i = 0; i < op.mask.size(); ++i) {
    if (op.mask[i] >= kQuadrant && op.mask[i] != 255) {
      c.add("mask", fmt::format("entry {} is {}: a source partition 0..31 within the quadrant, "
                                "or 255",
                                i, op.mask[i]));
    }
  }
  if (op.dst.free_elements() != op.src.free_elements()) {
    c.add("src", fmt::format("free size {} differs from the dst's {}", op.src.free_elements(),
                             op.dst.free_elements()));
  }
  // ISA: the start-partition rule applies to ceil(max(src, dst) / 32) * 32 partitions.
  const std::uint32_t span =
      (std::max(op.src.partitions, op.dst.partitions) + kQuadrant - 1) / kQuadrant * kQuadrant;
  for (const auto& [name, ap] : {std::pair{"dst", &op.dst}, std::pair{"src", &op.src}}) {
    if (span <= 128 && !start_partition_allowed(ap->start_partition, span)) {
      c.add(name, fmt::format("start partition {} is not allowed for a {}-partition shuffle",
                              ap->start_partition, span));
    }
  }
}

void check_op(Checker& c, const CustomOp& op) {
  if (op.op.empty()) c.add("op", "a custom operator needs a registered name");
  if (op.outputs.empty()) c.add("outputs", "a custom operator needs at least one output");
  for (std::size_t i = 0; i < op.outputs.size(); ++i) {
    c.require_memory(fmt::format("outputs[{}]", i), op.outputs[i], {Memory::kSbuf});
  }
  for (std::size_t i = 0; i < op.inputs.size(); ++i) {
    c.require_memory(fmt::format("inputs[{}]", i), op.inputs[i], {Memory::kSbuf});
  }
}

void check_op(Checker& c, const Rand2& op) {
  c.require_generation(Generation::kGen4, "rand2");
  if (!(op.min < op.max)) {
    c.add("max", fmt::format("range [{}, {}) is empty", op.min, op.max));
  }
}

void check_op(Checker& c, const RandSetState& op) {
  check_rng_state(c, "src_seeds", op.src_seeds, RandSetState::kName);
}
void check_op(Checker& c, const RandGetState& op) {
  check_rng_state(c, "dst", op.dst, RandGetState::kName);
}

void check_op(Checker& c, const Rng& op) {
  c.require_dtype(
      "dst", op.dst,
      {DType::kInt8, DType::kInt16, DType::kInt32, DType::kUInt8, DType::kUInt16, DType::kUInt32});
  if (c.engine == Engine::kGpSimd) c.require_generation(Generation::kGen3, "rng on gpsimd");
}

void check_op(Checker& c, const SetRngSeed& op) {
  // "a 32-bit value" (ISA): its word is the seed whatever its type.
  c.require_dtype("src_seeds", op.src_seeds, {DType::kUInt32, DType::kInt32, DType::kFloat32});
  if (op.src_seeds.partitions != 1 || op.src_seeds.free_elements() != 1) {
    c.add("src_seeds",
          fmt::format("must be one 32-bit value of shape [1, 1], not {}", shape_of(op.src_seeds)));
  }
}

void check_op(Checker& c, const Dropout& op) {
  c.require_same_shape("data", op.data, "dst", op.dst);
  c.require_same_dtype("dst", op.dst, "data", op.data, "dropout keeps the dtype");
  if (numerics::is_mx_packed(op.data.dtype))
    c.add("data", "an x4-packed dtype has no single elements to drop");
  c.require_per_partition("prob", op.prob, op.dst.partitions);
  if (const auto* prob = std::get_if<AccessPattern>(&op.prob)) {
    if (numerics::is_integer(op.data.dtype))
      c.require_dtype("prob", *prob, {DType::kFloat32});
    else if (numerics::is_integer(prob->dtype))
      c.add("prob", "a probability tile must have a float dtype");
  } else if (const float p = std::get<float>(op.prob); !(p >= 0.0f && p <= 1.0f)) {
    c.add("prob", fmt::format("{} is not a probability in [0, 1]", p));
  }
}

// ISA: one row of segment ids, [1, N] -> [1, 2, N], fp32 or int32 on both sides.
void check_op(Checker& c, const SequenceBounds& op) {
  c.require_partitions("segment_ids", op.segment_ids, 1, "sequence_bounds (one row)");
  c.require_partitions("dst", op.dst, 1, "sequence_bounds (one row)");
  c.require_dtype("segment_ids", op.segment_ids, {DType::kFloat32, DType::kInt32});
  c.require_dtype("dst", op.dst, {DType::kFloat32, DType::kInt32});
  c.require_free("dst", op.dst, 2 * op.segment_ids.free_elements(),
                 "a [start, end] pair per segment id");
}

// ISA: GpSimd core k reads and writes only partition 16k of its 16 (the generic start
// partition rule already keeps every operand's start a multiple of 32).
void check_op(Checker& c, const NonzeroWithCount& op) {
  c.require_generation(Generation::kGen3, "nonzero_with_count");
  c.require_dtype("src", op.src, {DType::kFloat32, DType::kInt32});
  c.require_dtype("dst", op.dst, {DType::kInt32});
  c.require_partitions("dst", op.dst, op.src.partitions, "nonzero_with_count (partitions kept)");
  c.require_same_start("dst", op.dst, "src", op.src, "each GpSimd core keeps its rows");
  c.require_free("dst", op.dst, op.src.free_elements() + 1,
                 "one index per src element plus the count");
}

void check_op(Checker& c, const NcNGather& op) {
  c.require_partitions("data", op.data, op.dst.partitions, "nc_n_gather (partitions kept)");
  c.require_partitions("indices", op.indices, op.dst.partitions, "nc_n_gather (partitions kept)");
  c.require_dtype("indices", op.indices, {DType::kUInt32});
  c.require_same_dtype("dst", op.dst, "data", op.data, "nc_n_gather does not cast");
  c.require_free("dst", op.dst, op.indices.free_elements(), "one element per index");
}

void check_op(Checker& c, const Topk& op) {
  c.require_dtype("src", op.src, {DType::kBFloat16});
  c.require_dtype("val_dst", op.val_dst, {DType::kBFloat16});
  c.require_dtype("idx_dst", op.idx_dst, {DType::kUInt32});
  for (const auto& [name, ap] : {std::pair{"val_dst", &op.val_dst},
                                 std::pair{"idx_dst", &op.idx_dst}, std::pair{"src", &op.src}})
    c.require_core_groups(name, *ap, "topk", "one snake each");
  // Each core writes its own snake's results into its own partitions.
  c.require_same_start("val_dst", op.val_dst, "src", op.src, "each GpSimd core keeps its rows");
  c.require_same_start("idx_dst", op.idx_dst, "src", op.src, "each GpSimd core keeps its rows");
  for (const auto& [name, ap] :
       {std::pair{"val_dst", &op.val_dst}, std::pair{"idx_dst", &op.idx_dst}}) {
    if (ap->num_dims != 1)
      c.add(name, fmt::format("has {} free dims; topk writes a [par_dim, K] tile", ap->num_dims));
  }
  c.require_partitions("val_dst", op.val_dst, op.src.partitions, "topk (partitions kept)");
  c.require_same_shape("idx_dst", op.idx_dst, "val_dst", op.val_dst);
  if (op.n < kTopkMinN || op.n > kTopkMaxN)
    c.add("n", fmt::format("{} is outside [{}, {}]", op.n, kTopkMinN, kTopkMaxN));
  const std::uint64_t k = op.val_dst.free_elements();
  if (k < 1 || k > kTopkMaxK || k > op.n) {
    c.add("val_dst", fmt::format("K = {} (its free size) must be in [1, min(n, {})] (n = {})", k,
                                 kTopkMaxK, op.n));
  }
  const std::uint64_t columns =
      (std::uint64_t{op.n} + kGpSimdPartitionsPerCore - 1) / kGpSimdPartitionsPerCore;
  if (op.src.free_elements() < columns) {
    c.add("src", fmt::format("has {} columns; a snake of n = {} needs at least {}",
                             op.src.free_elements(), op.n, columns));
  }
}

}  // namespace trnsim::isa::validate_detail
