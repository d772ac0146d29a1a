// Pass 1: verify (docs/compiler.md, "Verify"): every operand against the storage it names,
// every instruction against the ISA rules on each engine that may run it.
#include <fmt/format.h>

#include "compiler/passes.h"
#include "isa/validate.h"

namespace trnsim::compiler::detail {

namespace {

// Checks one operand against the storage it names; on success rebases `ap` to the storage's
// own coordinates (offset inside the storage), so that ISA checks see real sizes.
void check_operand(const KernelIr& ir, const IrInstruction& ir_inst, AccessPattern& ap,
                   const std::string& label) {
  const std::string op = std::string(isa::op_name(ir_inst.inst.op));
  auto fail = [&](const std::string& why, std::vector<util::Note> notes = {}) {
    throw KernelError(ir_inst.inst.origin, fmt::format("{}: operand '{}': {}", op, label, why),
                      std::move(notes));
  };
  const auto declared = [](const Storage& s) {
    return std::vector<util::Note>{{s.origin, fmt::format("'{}' declared here", s.name)}};
  };
  if (ap.offset < kernel::storage_window(0)) fail("does not address any declared tensor or tile");
  const StorageId id = kernel::storage_of_offset(ap.offset);
  if (id >= ir.storages.size())
    fail(fmt::format("names storage {} but the kernel declared only {}", id, ir.storages.size()));
  const Storage& s = ir.storages[id];
  if (kernel::memory_of(s.buffer) != ap.memory)
    fail(fmt::format("'{}' lives in {} but the operand addresses {}", s.name,
                     kernel::buffer_name(s.buffer), isa::memory_name(ap.memory)));
  AccessPattern local = ap;
  local.offset = kernel::offset_in_storage(ap.offset);
  const auto [lo, hi] = local.byte_span();
  if (lo < 0 || hi > static_cast<std::int64_t>(s.bytes))
    fail(fmt::format("bytes [{}, {}) {} outside '{}' ({} bytes{})", lo, hi,
                     hi > lo ? "reach" : "lie", s.name, s.bytes,
                     kernel::is_on_chip(s.buffer) ? " per partition" : ""),
         declared(s));
  if (kernel::is_on_chip(s.buffer) &&
      std::uint64_t{ap.start_partition} + ap.partitions > s.partitions)
    fail(fmt::format("partitions [{}, {}) outside '{}' ({} partitions)", ap.start_partition,
                     std::uint64_t{ap.start_partition} + ap.partitions, s.name, s.partitions),
         declared(s));
  ap = local;
}

std::string violations_text(const std::vector<isa::Violation>& vs) {
  std::string text;
  for (const isa::Violation& v : vs) {
    if (!text.empty()) text += "; ";
    text += v.operand.empty() ? v.message : fmt::format("operand '{}': {}", v.operand, v.message);
  }
  return text;
}

}  // namespace

std::vector<std::uint8_t> verify(const KernelIr& ir, const arch::ChipConfig& chip) {
  for (const Storage& s : ir.storages) {
    if (!kernel::is_on_chip(s.buffer)) continue;
    const std::uint64_t cap = capacity_of(s.buffer, chip);
    if (s.bytes > cap)
      throw KernelError(s.origin, fmt::format("{} tile '{}' needs {} bytes per partition, more "
                                              "than the {} bytes of a partition",
                                              memory_upper(s.buffer), s.name, s.bytes, cap));
    if (s.partitions == 0 || s.partitions > static_cast<std::uint32_t>(chip.sbuf.partitions.value))
      throw KernelError(s.origin, fmt::format("tile '{}' has {} partitions (1..{} allowed)", s.name,
                                              s.partitions, chip.sbuf.partitions.value));
  }
  std::vector<std::uint8_t> allowed(ir.instructions.size(), 0);
  for (std::size_t i = 0; i < ir.instructions.size(); ++i) {
    const IrInstruction& ir_inst = ir.instructions[i];
    for (const std::uint32_t p : ir_inst.after)
      if (p >= i)
        throw KernelError(ir_inst.inst.origin,
                          fmt::format("instruction {} depends on instruction {}, which is not "
                                      "before it (dependencies point back in program order)",
                                      i, p));
    isa::Instruction local = ir_inst.inst;
    local.waits.clear();
    local.signals.clear();
    isa::for_each_operand(local.op, [&](AccessPattern& ap, const isa::OperandRef& operand) {
      check_operand(ir, ir_inst, ap, operand.label());
    });
    std::uint8_t mask = ir_inst.engines ? ir_inst.engines : isa::op_engines(local.op);
    mask &= isa::op_engines(local.op);
    if (mask == 0)
      throw KernelError(local.origin,
                        fmt::format("{}: no engine can run it", isa::op_name(local.op)));
    std::vector<isa::Violation> first_failure;
    isa::Engine first_engine = isa::Engine::kTensor;
    for (int e = 0; e < isa::kNumEngines; ++e) {
      const auto engine = static_cast<isa::Engine>(e);
      if (!(mask & isa::engine_bit(engine))) continue;
      local.queue = {engine,
                     engine == isa::Engine::kDma ? ir_inst.dma_queue.value_or(0) : std::uint8_t{0}};
      std::vector<isa::Violation> vs = isa::check_instruction(local, i, chip);
      if (vs.empty()) {
        allowed[i] |= isa::engine_bit(engine);
      } else if (first_failure.empty()) {
        first_failure = std::move(vs);
        first_engine = engine;
      }
    }
    if (allowed[i] == 0)
      throw KernelError(local.origin, fmt::format("{} on {}: {}", isa::op_name(local.op),
                                                  isa::engine_name(first_engine),
                                                  violations_text(first_failure)));
  }
  return allowed;
}

}  // namespace trnsim::compiler::detail
