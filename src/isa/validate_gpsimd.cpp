// Validation rules of local_gather, nc_stream_shuffle, custom_op and the random-number
// operations (listed, with their sources, in docs/isa.md "Validation rules").
#include <fmt/format.h>

#include "isa/validate_detail.h"

namespace trnsim::isa::validate_detail {

namespace {

constexpr std::uint64_t kGpSimdPartitionsPerCore = 16;
constexpr std::uint64_t kLocalGatherIndicesPerCore = 4096;

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
       {std::pair{"dst", &op.dst}, std::pair{"src", &op.src}, std::pair{"index", &op.index}}) {
    if (ap->partitions % kGpSimdPartitionsPerCore != 0) {
      c.add(name, fmt::format("{} partitions; local_gather needs a multiple of 16 (one GpSimd core "
                              "each)",
                              ap->partitions));
    }
  }
  c.require_partitions("src", op.src, op.dst.partitions, "local_gather");
  c.require_partitions("index", op.index, op.dst.partitions, "local_gather");
  c.require_dtype("index", op.index, {DType::kUInt16});
  if (op.dst.dtype != op.src.dtype) {
    c.add("dst", fmt::format("dtype {} differs from the src's {} (local_gather does not cast)",
                             numerics::name(op.dst.dtype), numerics::name(op.src.dtype)));
  }
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

}  // namespace trnsim::isa::validate_detail
