// Internals of the validator shared by its files (not part of the public header
// isa/validate.h): the Checker that collects one instruction's violations, the helpers the
// rules have in common and one check_op overload per operation. validate.cpp checks every
// instruction and operand; the per-operation rules are split by family: validate_tensor.cpp
// (PE array), validate_elementwise.cpp (Vector/Scalar/GpSimd elementwise), validate_gpsimd.cpp
// (gather, shuffle, custom operators, random numbers, index operations), validate_dma.cpp (DMA and
// synchronisation) and validate_control.cpp (registers and branches).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "isa/validate.h"

namespace trnsim::isa::validate_detail {

using arch::Generation;
using numerics::DType;

constexpr std::uint32_t kQuadrant = 32;  // partitions per Vector cross-partition bank

inline std::uint64_t as_count(double value) {
  return value <= 0 ? 0 : static_cast<std::uint64_t>(value);
}

inline std::string shape_of(const AccessPattern& ap) {
  return fmt::format("[{}, {}]", ap.partitions, ap.free_elements());
}

inline bool one_of(DType t, std::initializer_list<DType> allowed) {
  return std::find(allowed.begin(), allowed.end(), t) != allowed.end();
}
inline bool one_of(AluOp op, std::initializer_list<AluOp> allowed) {
  return std::find(allowed.begin(), allowed.end(), op) != allowed.end();
}
inline std::string dtype_list(std::initializer_list<DType> allowed) {
  std::string text;
  for (DType t : allowed) {
    if (!text.empty()) text += ", ";
    text += numerics::name(t);
  }
  return text;
}
inline std::string alu_list(std::initializer_list<AluOp> allowed) {
  std::string text;
  for (AluOp op : allowed) {
    if (!text.empty()) text += ", ";
    text += alu_op_name(op);
  }
  return text;
}

// Collects the violations of one instruction on one chip.
class Checker {
 public:
  Checker(const Instruction& inst_in, std::size_t index, const arch::ChipConfig& config)
      : inst(inst_in), chip(config), engine(inst_in.queue.engine), index_(index) {}

  void add(std::string_view operand, std::string message) {
    violations_.push_back(Violation{index_, std::string(op_name(inst.op)), inst.origin,
                                    std::string(operand), std::move(message)});
  }
  std::vector<Violation> take() { return std::move(violations_); }

  Generation generation() const { return chip.generation; }
  std::string core() const { return arch::core_name(chip.generation); }
  bool at_least(Generation g) const {
    return static_cast<int>(chip.generation) >= static_cast<int>(g);
  }

  // "<what> needs NeuronCore-vN or newer".
  void require_generation(Generation g, std::string_view what, std::string_view operand = "") {
    if (!at_least(g)) {
      add(operand,
          fmt::format("{} needs {} or newer (this chip is {})", what, arch::core_name(g), core()));
    }
  }
  void require_memory(std::string_view name, const AccessPattern& ap,
                      std::initializer_list<Memory> allowed) {
    if (std::find(allowed.begin(), allowed.end(), ap.memory) != allowed.end()) return;
    std::string names;
    for (Memory m : allowed) names += std::string(names.empty() ? "" : " or ") += memory_name(m);
    add(std::string(name), fmt::format("must be in {}, not {}", names, memory_name(ap.memory)));
  }
  void require_dtype(std::string_view name, const AccessPattern& ap,
                     std::initializer_list<DType> allowed) {
    if (!one_of(ap.dtype, allowed)) {
      add(std::string(name), fmt::format("dtype {} is not allowed here (allowed: {})",
                                         numerics::name(ap.dtype), dtype_list(allowed)));
    }
  }
  void require_integer(std::string_view name, const AccessPattern& ap, std::string_view why) {
    if (!numerics::is_integer(ap.dtype)) {
      add(std::string(name), fmt::format("dtype {} is not an integer type, as {} requires",
                                         numerics::name(ap.dtype), why));
    }
  }
  // Same partitions and the same number of elements per partition.
  void require_same_shape(std::string_view name, const AccessPattern& ap,
                          std::string_view reference_name, const AccessPattern& reference) {
    if (ap.partitions != reference.partitions || ap.free_elements() != reference.free_elements()) {
      add(std::string(name),
          fmt::format("shape {} does not match {} {} (same partitions and elements per "
                      "partition required)",
                      shape_of(ap), reference_name, shape_of(reference)));
    }
  }
  void require_free(std::string_view name, const AccessPattern& ap, std::uint64_t expected,
                    std::string_view why) {
    if (ap.free_elements() != expected) {
      add(std::string(name), fmt::format("has {} elements per partition; {} needs {}",
                                         ap.free_elements(), why, expected));
    }
  }
  void require_free_at_most(std::string_view name, const AccessPattern& ap, std::uint64_t limit,
                            std::string_view what) {
    if (ap.free_elements() > limit) {
      add(std::string(name), fmt::format("free size {} exceeds the limit {} ({}) of {}",
                                         ap.free_elements(), limit, what, core()));
    }
  }
  void require_partitions(std::string_view name, const AccessPattern& ap, std::uint64_t expected,
                          std::string_view why) {
    if (ap.partitions != expected) {
      add(std::string(name),
          fmt::format("has {} partitions; {} needs {}", ap.partitions, why, expected));
    }
  }
  // An operation that does not cast: `ap` has `reference`'s dtype.
  void require_same_dtype(std::string_view name, const AccessPattern& ap,
                          std::string_view reference_name, const AccessPattern& reference,
                          std::string_view why) {
    if (ap.dtype != reference.dtype) {
      add(std::string(name),
          fmt::format("dtype {} differs from the {}'s {} ({})", numerics::name(ap.dtype),
                      reference_name, numerics::name(reference.dtype), why));
    }
  }
  // GpSimd work split by core: whole groups of kGpSimdPartitionsPerCore partitions.
  void require_core_groups(std::string_view name, const AccessPattern& ap, std::string_view what,
                           std::string_view why) {
    if (ap.partitions % kGpSimdPartitionsPerCore != 0) {
      add(std::string(name), fmt::format("{} partitions; {} needs a multiple of {} ({})",
                                         ap.partitions, what, kGpSimdPartitionsPerCore, why));
    }
  }
  // Work that stays on its engine lanes: `ap` starts on `reference`'s partition.
  void require_same_start(std::string_view name, const AccessPattern& ap,
                          std::string_view reference_name, const AccessPattern& reference,
                          std::string_view why) {
    if (ap.start_partition != reference.start_partition) {
      add(std::string(name),
          fmt::format("starts at partition {}, the {} at {} ({})", ap.start_partition,
                      reference_name, reference.start_partition, why));
    }
  }
  // A [P, 1] per-partition operand (tensor_scalar operands, activation scale/bias, ...).
  void require_per_partition(std::string_view name, const AccessPattern& ap,
                             std::uint32_t partitions) {
    if (ap.partitions != partitions || ap.free_elements() != 1) {
      add(std::string(name), fmt::format("a per-partition operand must have shape [{}, 1], not {}",
                                         partitions, shape_of(ap)));
    }
  }
  void require_per_partition(std::string_view name, const ScalarOperand& operand,
                             std::uint32_t partitions) {
    if (const auto* ap = std::get_if<AccessPattern>(&operand)) {
      require_per_partition(name, *ap, partitions);
    }
  }
  void require_alu(std::string_view field, AluOp op, std::initializer_list<AluOp> allowed) {
    if (!one_of(op, allowed)) {
      add(std::string(field), fmt::format("operator {} is not allowed here (allowed: {})",
                                          alu_op_name(op), alu_list(allowed)));
    }
  }
  void forbid_alu(std::string_view field, AluOp op, AluOp forbidden, std::string_view why) {
    if (op == forbidden)
      add(std::string(field), fmt::format("operator {} {}", alu_op_name(op), why));
  }
  void forbid_both_psum(std::string_view a_name, const AccessPattern& a, std::string_view b_name,
                        const AccessPattern& b) {
    if (a.memory == Memory::kPsum && b.memory == Memory::kPsum) {
      add(std::string(b_name),
          fmt::format("'{}' and '{}' may not both be in psum", a_name, b_name));
    }
  }
  void require_engine(Engine required, std::string_view why) {
    if (engine != required) {
      add("", fmt::format("{} runs only on {} (queued on {})", why, engine_name(required),
                          engine_name(engine)));
    }
  }

  const Instruction& inst;
  const arch::ChipConfig& chip;
  Engine engine;

 private:
  std::size_t index_;
  std::vector<Violation> violations_;
};

// The start-partition rule of ARCH-v2: 65-128 partitions start at 0; 33-64 at 0 or 64;
// 1-32 at a multiple of 32.
bool start_partition_allowed(std::uint32_t start, std::uint32_t partitions);

// Free dims of a pattern: 1 to kMaxFreeDims, no count 0; on chip also within the hardware
// field widths.
void check_pattern_dims(Checker& c, std::string_view name, std::uint8_t num_dims,
                        const std::array<Dim, kMaxFreeDims>& dims, bool on_chip);

// ---------------------------------------------------------------------------------------
// Per-operation rules. One overload per operation and no generic fallback, so that a new
// operation does not compile until its rules are written (even if there are none).

// validate_tensor.cpp
void check_op(Checker& c, const NcMatmul& op);
void check_op(Checker& c, const NcMatmulMx& op);
void check_op(Checker& c, const NcTranspose& op);
// validate_elementwise.cpp
void check_op(Checker& c, const TensorTensor& op);
void check_op(Checker& c, const TensorScalar& op);
void check_op(Checker& c, const ScalarTensorTensor& op);
void check_op(Checker& c, const TensorReduce& op);
void check_op(Checker& c, const TensorPartitionReduce& op);
void check_op(Checker& c, const TensorCopy& op);
void check_op(Checker& c, const TensorTensorScan& op);
void check_op(Checker& c, const BnStats& op);
void check_op(Checker& c, const BnAggr& op);
void check_op(Checker& c, const Select& op);
void check_op(Checker& c, const RangeSelect& op);
void check_op(Checker& c, const Iota& op);
void check_op(Checker& c, const Memset& op);
void check_op(Checker& c, const Max8& op);
void check_op(Checker& c, const NcFindIndex8& op);
void check_op(Checker& c, const Exponential& op);
void check_op(Checker& c, const Reciprocal& op);
void check_op(Checker& c, const QuantizeMx& op);
void check_op(Checker& c, const Activation& op);
void check_op(Checker& c, const AffineSelect& op);
void check_op(Checker& c, const TensorScalarReduce& op);
void check_op(Checker& c, const TensorCopyPredicated& op);
void check_op(Checker& c, const NcMatchReplace8& op);
void check_op(Checker& c, const Activate2& op);
void check_op(Checker& c, const TensorScalarCumulative& op);
// validate_gpsimd.cpp
void check_op(Checker& c, const LocalGather& op);
void check_op(Checker& c, const NcStreamShuffle& op);
void check_op(Checker& c, const CustomOp& op);
void check_op(Checker& c, const Rand2& op);
void check_op(Checker& c, const RandSetState& op);
void check_op(Checker& c, const RandGetState& op);
void check_op(Checker& c, const Rng& op);
void check_op(Checker& c, const SetRngSeed& op);
void check_op(Checker& c, const Dropout& op);
void check_op(Checker& c, const SequenceBounds& op);
void check_op(Checker& c, const NonzeroWithCount& op);
void check_op(Checker& c, const NcNGather& op);
void check_op(Checker& c, const Topk& op);
// validate_dma.cpp
void check_op(Checker& c, const DmaCopy& op);
void check_op(Checker& c, const DmaTranspose& op);
void check_op(Checker& c, const DmaIndirect& op);
void check_op(Checker& c, const DmaCompute& op);
void check_op(Checker& c, const SemaphoreOp& op);
void check_op(Checker& c, const CoreBarrier& op);
void check_op(Checker& c, const SendRecv& op);
void check_op(Checker& c, const Collective& op);
void check_op(Checker& c, const RankId& op);
void check_op(Checker& c, const RingRankId& op);
// validate_control.cpp
void check_op(Checker& c, const RegSet& op);
void check_op(Checker& c, const RegAdd& op);
void check_op(Checker& c, const RegLoad& op);
void check_op(Checker& c, const RegStore& op);
void check_op(Checker& c, const Branch& op);
// A register field: present and r0..r63.
void require_register(Checker& c, std::string_view field, Reg reg);

}  // namespace trnsim::isa::validate_detail
