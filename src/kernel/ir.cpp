#include "kernel/ir.h"

#include <fmt/core.h>

#include <array>

#include "isa/asm.h"
#include "util/enum_names.h"

namespace trnsim::kernel {

std::string_view buffer_name(Buffer b) {
  static constexpr std::array<std::string_view, 4> kNames = {"sbuf", "psum", "private_hbm",
                                                             "shared_hbm"};
  return util::enum_name(kNames, b);
}

std::string_view tensor_role_name(TensorRole r) {
  static constexpr std::array<std::string_view, 4> kNames = {"input", "output", "scratch",
                                                             "constant"};
  return util::enum_name(kNames, r);
}

KernelError::KernelError(isa::Origin where, std::string why, std::vector<util::Note> notes)
    : util::Error(util::Diagnostic{std::move(where), why, std::move(notes)}),
      why_(std::move(why)) {}

std::string format_ir(const KernelIr& ir) {
  std::string out =
      fmt::format("kernel {} (program {} of {}): {} storages, {} instructions\n", ir.name,
                  ir.program_id, ir.num_programs, ir.storages.size(), ir.instructions.size());
  for (const Storage& s : ir.storages) {
    std::string dims;
    for (std::size_t d = 0; d < s.shape.size(); ++d) {
      if (d) dims += ", ";
      dims += std::to_string(s.shape[d]);
    }
    out += fmt::format("  %{} = {} {}[{}]", s.name, buffer_name(s.buffer), numerics::name(s.dtype),
                       dims);
    if (is_hbm(s.buffer)) out += fmt::format(" {}", tensor_role_name(s.role));
    if (s.fixed_offset) out += fmt::format(" at byte {}", *s.fixed_offset);
    if (s.origin.known()) out += "  ; " + util::to_string(s.origin);
    out += "\n";
  }
  for (std::size_t i = 0; i < ir.instructions.size(); ++i) {
    const IrInstruction& in = ir.instructions[i];
    isa::Instruction shown = in.inst;
    shown.origin = {};
    std::string operands;
    isa::for_each_operand(shown.op, [&](isa::AccessPattern& ap, const isa::OperandRef& operand) {
      const StorageId id = storage_of_offset(ap.offset);
      operands += fmt::format(" {}=%{}", operand.label(),
                              id < ir.storages.size() ? ir.storages[id].name : "?");
      ap.offset = offset_in_storage(ap.offset);
    });
    std::string engines;
    for (int e = 0; e < isa::kNumEngines; ++e)
      if (in.engines & isa::engine_bit(static_cast<isa::Engine>(e))) {
        if (!engines.empty()) engines += '|';
        engines += isa::engine_name(static_cast<isa::Engine>(e));
      }
    // The printer names a queue, which the IR has not chosen yet: drop that prefix.
    std::string text = isa::print_instruction(shown);
    if (const auto close = text.find("] "); close != std::string::npos) text.erase(0, close + 2);
    if (const auto at = text.rfind(" @"); at != std::string::npos) text.resize(at);
    out += fmt::format("  {:>5}: [{}{}] {}  ;{}", i, engines, in.engine_fixed ? " fixed" : "", text,
                       operands);
    if (in.inst.origin.known()) out += " @ " + util::to_string(in.inst.origin);
    out += "\n";
  }
  return out;
}

}  // namespace trnsim::kernel
