// Static checks of instructions. Every rule is listed, with its source, in docs/isa.md
// ("Validation rules"); keep the two in step.
#include "isa/validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <string>

#include "isa/validate_detail.h"

namespace trnsim::isa {

util::Diagnostic Violation::diagnostic() const {
  std::string text = fmt::format("instruction {} ({})", index, op);
  if (!operand.empty()) text += fmt::format(": operand '{}'", operand);
  return {origin, text + ": " + message};
}

std::string Violation::to_string() const {
  return util::format(diagnostic());
}

namespace {

std::vector<util::Diagnostic> diagnostics_of(const std::vector<Violation>& violations) {
  std::vector<util::Diagnostic> diagnostics;
  diagnostics.reserve(violations.size());
  for (const Violation& v : violations) diagnostics.push_back(v.diagnostic());
  return diagnostics;
}

}  // namespace

ValidationError::ValidationError(std::vector<Violation> violations)
    : util::Error(diagnostics_of(violations)), violations_(std::move(violations)) {}

namespace {

using namespace validate_detail;

// Hardware access-pattern fields (ARCH-v2 / nki-aps): dim sizes are uint16, steps int16.
constexpr std::uint64_t kMaxDimCount = 65535;
constexpr std::int64_t kMinDimStep = -32768;
constexpr std::int64_t kMaxDimStep = 32767;

bool is_unpacked_sub_byte(DType t) {
  return t == DType::kFloat6E3M2 || t == DType::kFloat6E2M3 || t == DType::kFloat4E2M1;
}
std::string engine_list(std::uint8_t engines) {
  std::string text;
  for (int e = 0; e < kNumEngines; ++e) {
    if ((engines & engine_bit(static_cast<Engine>(e))) == 0) continue;
    if (!text.empty()) text += ", ";
    text += engine_name(static_cast<Engine>(e));
  }
  return text;
}

// Operands whose dtype may be an x4-packed MX type: MX matmul data, quantize_mx output,
// memset (of zero) and raw DMA moves. Everywhere else the engines cannot compute on them.
bool accepts_mx_packed(std::string_view mnemonic, std::string_view operand) {
  if (mnemonic == NcMatmulMx::kName) return operand == "stationary" || operand == "moving";
  if (mnemonic == QuantizeMx::kName || mnemonic == Memset::kName) return operand == "dst";
  return mnemonic == DmaCopy::kName && (operand == "dst" || operand == "src");
}

}  // namespace

namespace validate_detail {

bool start_partition_allowed(std::uint32_t start, std::uint32_t partitions) {
  if (partitions > 64) return start == 0;
  if (partitions > 32) return start == 0 || start == 64;
  return start % 32 == 0;
}

void check_pattern_dims(Checker& c, std::string_view name, std::uint8_t num_dims,
                        const std::array<Dim, kMaxFreeDims>& dims, bool on_chip) {
  if (num_dims < 1 || num_dims > kMaxFreeDims) {
    c.add(name, fmt::format("{} free dimensions; 1 to {} are supported", num_dims, kMaxFreeDims));
    return;
  }
  for (int k = 0; k < num_dims; ++k) {
    const Dim& dim = dims[k];
    if (dim.count == 0) c.add(name, fmt::format("dimension {} has count 0", k));
    if (!on_chip) continue;
    if (dim.count > kMaxDimCount) {
      c.add(name, fmt::format("dimension {} count {} exceeds the hardware limit {} (uint16)", k,
                              dim.count, kMaxDimCount));
    }
    if (dim.step < kMinDimStep || dim.step > kMaxDimStep) {
      c.add(name, fmt::format("dimension {} step {} is outside the hardware range {}..{} (int16)",
                              k, dim.step, kMinDimStep, kMaxDimStep));
    }
  }
}

}  // namespace validate_detail

namespace {

void check_operand(Checker& c, std::string_view name, const AccessPattern& ap) {
  const bool on_chip = ap.memory != Memory::kHbm;
  check_pattern_dims(c, name, ap.num_dims, ap.dims, on_chip);
  if (ap.is_dynamic()) require_register(c, name, ap.dyn_reg);

  if (on_chip) {
    const bool sbuf = ap.memory == Memory::kSbuf;
    const std::uint64_t partitions =
        as_count(sbuf ? c.chip.sbuf.partitions : c.chip.psum.partitions);
    const std::uint64_t bytes =
        as_count(sbuf ? c.chip.sbuf.bytes_per_partition : c.chip.psum.bytes_per_partition);
    if (ap.partitions == 0 || ap.partitions > partitions) {
      c.add(name, fmt::format("{} partitions; 1 to {} are allowed", ap.partitions, partitions));
    } else if (std::uint64_t{ap.start_partition} + ap.partitions > partitions) {
      c.add(name,
            fmt::format("partitions {}..{} run past the last partition {}", ap.start_partition,
                        std::uint64_t{ap.start_partition} + ap.partitions - 1, partitions - 1));
    } else if (!start_partition_allowed(ap.start_partition, ap.partitions)) {
      c.add(name, fmt::format("start partition {} is not allowed for {} partitions (65-128 "
                              "partitions start at 0, 33-64 at 0 or 64, 1-32 at a multiple of 32)",
                              ap.start_partition, ap.partitions));
    }
    if (ap.partition_step != 0) {
      c.add(name, "partition_step must be 0 on chip (partitions are always consecutive)");
    }
    const auto [lo, hi] = ap.byte_span();
    if (lo < 0 || static_cast<std::uint64_t>(hi) > bytes) {
      c.add(name, fmt::format("bytes [{}, {}) lie outside the {} bytes per partition of {} on {}",
                              lo, hi, bytes, memory_name(ap.memory), c.core()));
    }
    if (ap.offset % ap.element_bytes() != 0) {
      c.add(name, fmt::format("offset {} is not a multiple of the {}-byte {} element", ap.offset,
                              ap.element_bytes(), numerics::name(ap.dtype)));
    }
  } else {
    if (ap.partitions == 0) c.add(name, "0 partitions");
    if (ap.start_partition != 0) {
      c.add(name, "start_partition must be 0 in hbm (the offset is the address)");
    }
    // Every address the pattern forms lies in [lo, hi); bounding it by the chip's HBM also
    // keeps the simulator's address arithmetic far from 2^64 (a partition or free step of
    // 2^62 elements used to wrap around to the rows it should not reach).
    const auto [lo, hi] = ap.byte_span();
    const std::uint64_t capacity = arch::hbm_capacity_bytes(c.chip);
    if (lo < 0) {
      c.add(name, "pattern reaches below address 0");
    } else if (static_cast<std::uint64_t>(hi) > capacity) {
      const bool saturated = hi == std::numeric_limits<std::int64_t>::max();
      c.add(name, fmt::format("pattern reaches up to byte {}, beyond the {} bytes of HBM of {}",
                              saturated ? std::string("2^63 or more") : std::to_string(hi),
                              capacity, c.chip.name));
    }
  }

  // Which engines reach which memory (ARCH-v2; ISA). A sequencer loads and stores its
  // registers from SBUF or HBM (NKI's register_load/register_store take either).
  if (c.engine != Engine::kDma && ap.memory == Memory::kHbm &&
      op_class(c.inst.op) != OpClass::kControl) {
    c.add(name,
          fmt::format("the {} engine cannot access hbm (only DMA can)", engine_name(c.engine)));
  }
  if (c.engine == Engine::kGpSimd && ap.memory == Memory::kPsum) {
    c.add(name, "the gpsimd engine cannot access psum");
  }
  if (c.engine == Engine::kDma && ap.memory == Memory::kPsum) {
    c.add(name, "DMA cannot access psum (dma_copy moves between hbm and sbuf)");
  }

  // Per-instruction free size of the elementwise engines (ARCH-v2: 64K from SBUF, 4K from
  // PSUM).
  if (c.engine == Engine::kVector || c.engine == Engine::kScalar) {
    const auto& config = c.engine == Engine::kVector ? c.chip.vector : c.chip.scalar;
    const bool psum = ap.memory == Memory::kPsum;
    const std::uint64_t limit = as_count(psum ? config.free_max_psum : config.free_max_sbuf);
    if (ap.free_elements() > limit) {
      c.add(name, fmt::format("free size {} exceeds the limit {} of the {} engine reading {} on {}",
                              ap.free_elements(), limit, engine_name(c.engine),
                              memory_name(ap.memory), c.core()));
    }
  }

  // Dtypes.
  if (is_unpacked_sub_byte(ap.dtype)) {
    c.add(name, fmt::format("dtype {} is not an NKI tensor dtype (FP4/FP6 exist only x4-packed)",
                            numerics::name(ap.dtype)));
  }
  if (numerics::is_mx_packed(ap.dtype)) {
    c.require_generation(Generation::kGen4, fmt::format("dtype {}", numerics::name(ap.dtype)),
                         name);
    if (!accepts_mx_packed(op_name(c.inst.op), name)) {
      c.add(name, fmt::format("x4-packed dtype {} cannot be used by {}", numerics::name(ap.dtype),
                              op_name(c.inst.op)));
    }
  }
}

// The access patterns among an operation's fields; list operands are named "name[i]".
template <class T>
void check_member(Checker&, std::string_view, const T&) {}
void check_member(Checker& c, std::string_view name, const AccessPattern& ap) {
  check_operand(c, name, ap);
}
void check_member(Checker& c, std::string_view name, const std::optional<AccessPattern>& ap) {
  if (ap) check_operand(c, name, *ap);
}
void check_member(Checker& c, std::string_view name, const ScalarOperand& operand) {
  if (const auto* ap = std::get_if<AccessPattern>(&operand)) check_operand(c, name, *ap);
}
void check_member(Checker& c, std::string_view name, const std::vector<AccessPattern>& aps) {
  for (std::size_t i = 0; i < aps.size(); ++i)
    check_operand(c, fmt::format("{}[{}]", name, i), aps[i]);
}

void check_queue_and_sync(Checker& c, const Instruction& inst) {
  const std::uint8_t engines = op_engines(inst.op);
  if ((engines & engine_bit(inst.queue.engine)) == 0) {
    c.add("", fmt::format("the {} engine cannot execute {} (allowed: {})",
                          engine_name(inst.queue.engine), op_name(inst.op), engine_list(engines)));
  }
  if (inst.queue.engine == Engine::kDma) {
    const std::uint64_t queues = as_count(c.chip.dma.queues_per_engine);
    if (inst.queue.index >= queues) {
      c.add("", fmt::format("DMA queue {} does not exist ({} queues on {})", inst.queue.index,
                            queues, c.core()));
    }
  } else if (inst.queue.index != 0) {
    c.add("", fmt::format("the {} engine has a single queue (index 0), not {}",
                          engine_name(inst.queue.engine), inst.queue.index));
  }
  for (const SemWait& wait : inst.waits) {
    if (wait.sem >= kNumSemaphores) {
      c.add("", fmt::format("wait on semaphore {} (semaphores are 0..{})", wait.sem,
                            kNumSemaphores - 1));
    }
    if (wait.base.present()) require_register(c, "", wait.base);
  }
  for (const SemSignal& signal : inst.signals) {
    if (signal.sem >= kNumSemaphores) {
      c.add("", fmt::format("signal of semaphore {} (semaphores are 0..{})", signal.sem,
                            kNumSemaphores - 1));
    }
  }
}

}  // namespace

std::vector<Violation> check_instruction(const Instruction& inst, std::size_t index,
                                         const arch::ChipConfig& chip) {
  Checker checker(inst, index, chip);
  check_queue_and_sync(checker, inst);
  std::visit(
      [&](const auto& op) {
        // No copy of the operation, no allocation: this runs per instruction.
        for_each_field(op, [&](std::string_view name, const auto& member, Role) {
          check_member(checker, name, member);
        });
        check_op(checker, op);
      },
      inst.op);
  return checker.take();
}

namespace {

// The rules that need the whole program: a branch lands on an instruction of its own queue.
void check_program_rules(const Program& program, const arch::ChipConfig& chip,
                         std::vector<Violation>& all) {
  const std::vector<Instruction>& code = program.instructions;
  for (std::size_t i = 0; i < code.size(); ++i) {
    const auto* branch = std::get_if<Branch>(&code[i].op);
    if (branch == nullptr) continue;
    Checker c(code[i], i, chip);
    if (branch->target >= code.size()) {
      c.add("target", fmt::format("instruction {} does not exist (the program has {})",
                                  branch->target, code.size()));
    } else if (!(code[branch->target].queue == code[i].queue)) {
      c.add("target", fmt::format("instruction {} is on another queue; a branch stays on its own",
                                  branch->target));
    }
    auto violations = c.take();
    all.insert(all.end(), std::make_move_iterator(violations.begin()),
               std::make_move_iterator(violations.end()));
  }
}

}  // namespace

void validate_program(const Program& program, const arch::ChipConfig& chip) {
  std::vector<Violation> all;
  for (std::size_t i = 0; i < program.instructions.size(); ++i) {
    auto violations = check_instruction(program.instructions[i], i, chip);
    all.insert(all.end(), std::make_move_iterator(violations.begin()),
               std::make_move_iterator(violations.end()));
  }
  check_program_rules(program, chip, all);
  if (!all.empty()) throw ValidationError(std::move(all));
}

}  // namespace trnsim::isa
