// Validation rules of the DMA and synchronisation operations: dma_copy, dma_transpose,
// dma_indirect, dma_compute, sendrecv, collective, sem and core_barrier (listed, with their
// sources, in docs/isa.md "Validation rules").
#include <fmt/format.h>

#include <algorithm>

#include "isa/validate_detail.h"

namespace trnsim::isa::validate_detail {

namespace {

constexpr std::uint8_t kMaxDmaPriority = 3;
constexpr std::size_t kMaxDmaComputeSources = 16;  // ISA: "The max number of source tensors"

}  // namespace

void check_op(Checker& c, const DmaCopy& op) {
  if (op.dst.total_elements() != op.src.total_elements()) {
    c.add("src", fmt::format("{} elements; dst has {} (counts must match)", op.src.total_elements(),
                             op.dst.total_elements()));
  }
  if ((numerics::is_mx_packed(op.dst.dtype) || numerics::is_mx_packed(op.src.dtype)) &&
      op.dst.dtype != op.src.dtype) {
    c.add("dst", "x4-packed data is copied raw: dst and src dtypes must match");
  }
  if (op.accumulate == DmaAccumulate::kAdd) {
    if (!c.chip.dma.has_near_memory_accumulate) {
      c.add("accumulate", fmt::format("near-memory accumulate is not available on {}", c.core()));
    }
    c.require_memory("dst", op.dst, {Memory::kSbuf});
    c.require_dtype("dst", op.dst, {DType::kBFloat16, DType::kFloat32});
  }
  if (op.priority > kMaxDmaPriority) {
    c.add("priority",
          fmt::format("priority {} exceeds the highest class {}", op.priority, kMaxDmaPriority));
  } else if (op.priority != 0 && !c.chip.dma.has_priority) {
    c.add("priority", fmt::format("DMA priorities are not available on {}", c.core()));
  }
}

// ISA: only nl.add, at most 16 sources, every source with dst's element count. (x4-packed
// operands are refused generically: the engine computes on values.)
void check_op(Checker& c, const DmaCompute& op) {
  if (op.srcs.empty() || op.srcs.size() > kMaxDmaComputeSources) {
    c.add("srcs", fmt::format("{} sources; dma_compute takes 1 to {}", op.srcs.size(),
                              kMaxDmaComputeSources));
  }
  c.require_alu("reduce_op", op.reduce_op, {AluOp::kAdd});
  // NKI: without vector offsets every operand has a compile-time address.
  if (op.dst.is_dynamic()) c.add("dst", "dma_compute needs a compile-time address here");
  for (std::size_t i = 0; i < op.srcs.size(); ++i)
    if (op.srcs[i].is_dynamic())
      c.add(fmt::format("srcs[{}]", i), "dma_compute needs a compile-time address here");
  for (std::size_t i = 0; i < op.srcs.size(); ++i) {
    if (op.srcs[i].total_elements() != op.dst.total_elements()) {
      c.add(fmt::format("srcs[{}]", i),
            fmt::format("{} elements; dst has {} (counts must match)", op.srcs[i].total_elements(),
                        op.dst.total_elements()));
    }
  }
}

void check_op(Checker& c, const DmaTranspose& op) {
  c.require_generation(Generation::kGen3, "dma_transpose");
  c.require_memory("dst", op.dst, {Memory::kSbuf});
  c.require_same_dtype("dst", op.dst, "src", op.src, "dma_transpose does not cast");
  const std::size_t bytes = numerics::storage_bytes(op.src.dtype);
  if (bytes != 2 && bytes != 4) {
    c.add("src", fmt::format("dtype {} is not a 2- or 4-byte type", numerics::name(op.src.dtype)));
  }
  if (op.dst.partitions != op.src.free_elements() || op.dst.free_elements() != op.src.partitions) {
    c.add("dst", fmt::format("shape {} is not the transpose of the src's {}", shape_of(op.dst),
                             shape_of(op.src)));
  }
}

namespace {

// ISA (dma_transpose with an indirect source, "DMA Indirect Transpose Constraints"): a
// gather from HBM then a 2-D transpose into SBUF; a 2-byte dtype; rows of at most 128
// elements. Indices: uint32, 16..128 partitions in multiples of 16, exactly 128 when they
// have more than one column; gathered rows a multiple of 16; the transpose's shape.
void check_gather_transpose(Checker& c, const DmaIndirect& op) {
  c.require_generation(Generation::kGen3, "dma_transpose");
  if (op.mode != IndirectMode::kGather || op.accumulate != DmaAccumulate::kNone) {
    c.add("transpose", "a transposing dma_indirect is a plain gather (mode=gather, no accumulate)");
    return;
  }
  c.require_memory("dst", op.dst, {Memory::kSbuf});
  c.require_memory("src", op.src, {Memory::kHbm});
  c.require_dtype("index", op.index, {DType::kUInt32});
  c.require_same_dtype("dst", op.dst, "src", op.src, "dma_transpose does not cast");
  if (numerics::storage_bytes(op.src.dtype) != 2)
    c.add("src", fmt::format("dtype {} is not a 2-byte type (a gathering transpose moves 2-byte "
                             "elements)",
                             numerics::name(op.src.dtype)));
  if (op.src.free_elements() > 128)
    c.add("src", fmt::format("rows of {} elements; a gathering transpose takes at most 128",
                             op.src.free_elements()));
  const std::uint32_t p = op.index.partitions;
  if (p < 16 || p > 128 || p % 16 != 0 || (op.index.free_elements() > 1 && p != 128)) {
    c.add("index", fmt::format("{} partitions of indices with {} per partition; a gathering "
                               "transpose takes 16 to 128 in multiples of 16, exactly 128 with "
                               "more than one per partition",
                               p, op.index.free_elements()));
  }
  const std::uint64_t rows = op.index.total_elements();
  if (rows % 16 != 0)
    c.add("index",
          fmt::format("{} gathered rows; a gathering transpose takes a multiple of 16", rows));
  if (op.dst.partitions != op.src.free_elements() || op.dst.free_elements() != rows) {
    c.add("dst", fmt::format("shape {} is not the transpose of {} gathered rows of {} elements",
                             shape_of(op.dst), rows, op.src.free_elements()));
  }
}

}  // namespace

void check_op(Checker& c, const DmaIndirect& op) {
  c.require_memory("index", op.index, {Memory::kSbuf});
  c.require_dtype("index", op.index, {DType::kUInt32, DType::kInt32});
  if (op.transpose) {
    check_gather_transpose(c, op);
    return;
  }
  const bool gather = op.mode == IndirectMode::kGather;
  const AccessPattern& indexed_side = gather ? op.dst : op.src;
  if (op.index.total_elements() != indexed_side.partitions) {
    c.add("index",
          fmt::format("{} indices for {} rows of '{}' (one index per row)",
                      op.index.total_elements(), indexed_side.partitions, gather ? "dst" : "src"));
  }
  if (op.dst.free_elements() != op.src.free_elements()) {
    c.add("src", fmt::format("row size {} differs from the dst's {}", op.src.free_elements(),
                             op.dst.free_elements()));
  }
  if (op.accumulate == DmaAccumulate::kAdd) {
    // ISA (dma_compute read-modify-write): the indexed rows in HBM, the other side in SBUF.
    // (x4-packed operands are refused for every dma_indirect.)
    c.require_memory(gather ? "src" : "dst", gather ? op.src : op.dst, {Memory::kHbm});
    c.require_memory(gather ? "dst" : "src", gather ? op.dst : op.src, {Memory::kSbuf});
  }
}

// NKI 0.6 (ISA): sendrecv swaps tiles between the cores of a logical core, SBUF on both
// sides, the same dtype and shape; NeuronCore-v3 on.
void check_op(Checker& c, const SendRecv& op) {
  c.require_generation(Generation::kGen3, "sendrecv");
  c.require_memory("dst", op.dst, {Memory::kSbuf});
  c.require_memory("src", op.src, {Memory::kSbuf});
  if (op.dst.dtype != op.src.dtype)
    c.add("dst", "dst and src dtypes must match (the data moves raw between the cores)");
  if (op.dst.partitions != op.src.partitions || op.dst.free_elements() != op.src.free_elements()) {
    c.add("src", fmt::format("[{}, {}]; dst is [{}, {}] (the shapes must match)", op.src.partitions,
                             op.src.free_elements(), op.dst.partitions, op.dst.free_elements()));
  }
  const auto& options = c.chip.lnc_options;
  const int largest = options.empty() ? 1 : *std::max_element(options.begin(), options.end());
  for (const auto& [field, rank] : {std::pair{"send_to", op.send_to}, {"recv_from", op.recv_from}})
    if (rank >= static_cast<std::uint32_t>(largest))
      c.add(field, fmt::format("core {} of a logical core; {}'s largest has {} (0 to {})", rank,
                               c.chip.name, largest, largest - 1));
}

void check_op(Checker&, const SemaphoreOp&) {}  // only the generic wait/signal checks

void check_op(Checker& c, const CoreBarrier& op) {
  c.require_generation(Generation::kGen3, "core_barrier");
  const auto& options = c.chip.lnc_options;
  const int largest = options.empty() ? 1 : *std::max_element(options.begin(), options.end());
  if (op.num_cores < 2 || op.num_cores > static_cast<std::uint32_t>(largest)) {
    c.add("num_cores", fmt::format("{} cores; a barrier spans 2 to {} cores (largest logical core "
                                   "of {})",
                                   op.num_cores, largest, c.chip.name));
  }
}

namespace {

// The operands only some kinds take: permute_reduce's src1 (src's twin), the -v kinds'
// metadata (uint32, whole rows of one column per member, on one partition in SBUF).
void check_collective_operands(Checker& c, const Collective& op) {
  if ((op.kind == CollectiveKind::kPermuteReduce) != op.src1.has_value())
    c.add("src1", op.src1 ? fmt::format("only a permute_reduce takes src1, not {}",
                                        collective_kind_name(op.kind))
                          : std::string("a permute_reduce sends op(src, src1): src1 is missing"));
  if (op.src1) {
    c.require_memory("src1", *op.src1, {op.src.memory});
    if (op.src1->dtype != op.src.dtype || op.src1->partitions != op.src.partitions ||
        op.src1->total_elements() != op.src.total_elements())
      c.add("src1", fmt::format("{} [{}, {}]; src is {} [{}, {}] (the two operands of the "
                                "reduction match)",
                                numerics::name(op.src1->dtype), op.src1->partitions,
                                op.src1->free_elements(), numerics::name(op.src.dtype),
                                op.src.partitions, op.src.free_elements()));
  }
  const bool variable = is_variable_collective(op.kind);
  if (variable != op.metadata.has_value())
    c.add("metadata", op.metadata ? fmt::format("only all_gather_v and all_to_all_v take "
                                                "metadata, not {}",
                                                collective_kind_name(op.kind))
                                  : fmt::format("{} reads its counts from a metadata tensor: it "
                                                "is missing",
                                                collective_kind_name(op.kind)));
  if (!variable && (op.recv_counts_known || op.has_rdispls))
    c.add("recv_counts_known",
          fmt::format("recv_counts_known and has_rdispls belong to the -v collectives, not {}",
                      collective_kind_name(op.kind)));
  if (!op.metadata) return;
  const AccessPattern& m = *op.metadata;
  c.require_memory("metadata", m, {Memory::kHbm, Memory::kSbuf});
  if (m.dtype != numerics::DType::kUInt32)
    c.add("metadata",
          fmt::format("{} (counts and displacements are uint32)", numerics::name(m.dtype)));
  if (m.memory == Memory::kSbuf && m.partitions != 1)
    c.add("metadata",
          fmt::format("{} partitions (in SBUF the metadata lives on one partition)", m.partitions));
  const std::uint64_t rows = op.has_rdispls ? 4 : 3;
  if (m.total_elements() % rows != 0 ||
      (op.group_size != 0 && m.total_elements() != rows * op.group_size))
    c.add("metadata",
          fmt::format(
              "{} elements; it holds {} rows of one column per member{}", m.total_elements(), rows,
              op.group_size != 0 ? fmt::format(" ({} x {})", rows, op.group_size) : std::string()));
}

}  // namespace

// NKI 0.6 nki.collectives: HBM or SBUF on both sides (all_to_all and permute: HBM only), the
// same dtype; add, max or min reductions; replica groups that are whole and disjoint. What
// depends on the launch (group sizes against dst's size, ranks that exist) is checked when
// the collective runs.
void check_op(Checker& c, const Collective& op) {
  c.require_memory("src", op.src, {Memory::kHbm, Memory::kSbuf});
  c.require_memory("dst", op.dst, {Memory::kHbm, Memory::kSbuf});
  if (op.src.memory != op.dst.memory)
    c.add("dst", "src and dst must both be in HBM or both in SBUF (NKI mixes no memories)");
  const bool hbm_only = op.kind != CollectiveKind::kAllReduce &&
                        op.kind != CollectiveKind::kAllGather &&
                        op.kind != CollectiveKind::kReduceScatter;
  if (hbm_only) c.require_memory("src", op.src, {Memory::kHbm});
  check_collective_operands(c, op);
  if (op.dst.dtype != op.src.dtype)
    c.add("dst", fmt::format("{}; src is {} (a collective moves data of one dtype)",
                             numerics::name(op.dst.dtype), numerics::name(op.src.dtype)));
  if (numerics::is_mx_packed(op.src.dtype))
    c.add("src", "x4-packed data cannot be reduced or split by a collective");
  const bool reduces = op.kind == CollectiveKind::kAllReduce ||
                       op.kind == CollectiveKind::kReduceScatter ||
                       op.kind == CollectiveKind::kPermuteReduce;
  if (reduces && op.op != AluOp::kAdd && op.op != AluOp::kMaximum && op.op != AluOp::kMinimum)
    c.add("op", fmt::format("{} (a collective reduces with add, maximum or minimum)",
                            alu_op_name(op.op)));
  if (op.kind == CollectiveKind::kPermute || op.kind == CollectiveKind::kPermuteReduce) {
    if (op.pairs.size() % 2 != 0)
      c.add("pairs",
            "a permute lists source, target pairs (an even count; none: a ring in "
            "each replica group)");
    std::vector<std::uint32_t> sources, targets;
    for (std::size_t i = 0; i + 1 < op.pairs.size(); i += 2) {
      sources.push_back(op.pairs[i]);
      targets.push_back(op.pairs[i + 1]);
    }
    for (auto* ranks : {&sources, &targets}) {
      std::sort(ranks->begin(), ranks->end());
      if (std::adjacent_find(ranks->begin(), ranks->end()) != ranks->end()) {
        c.add("pairs", "a rank sends or receives twice (each at most once in a permute)");
        break;
      }
    }
    if (!op.groups.empty() && !op.pairs.empty())
      c.add("groups", "a permute takes pairs or replica groups (a ring in each), not both");
  } else if (!op.pairs.empty()) {
    c.add("pairs",
          fmt::format("only a permute takes pairs, not {}", collective_kind_name(op.kind)));
  }
  if (op.group_size == 0 && !op.groups.empty())
    c.add("group_size", "0 with groups listed (give the ranks per group)");
  if (op.group_size != 0 && op.groups.size() % op.group_size != 0)
    c.add("groups",
          fmt::format("{} ranks do not make groups of {}", op.groups.size(), op.group_size));
  std::vector<std::uint32_t> sorted = op.groups;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    c.add("groups", "a rank is listed twice (replica groups do not overlap)");
}

}  // namespace trnsim::isa::validate_detail
