// Validation rules of the control operations: reg_set, reg_add, reg_load, reg_store and
// branch (the branch target's rules are program-wide: validate.cpp). Listed in docs/isa.md
// "Validation rules".
#include <fmt/format.h>

#include "isa/validate_detail.h"

namespace trnsim::isa::validate_detail {

void require_register(Checker& c, std::string_view field, Reg reg) {
  if (!reg.present()) {
    c.add(field, "a register r0..r63 is required");
  } else if (reg.index >= kNumRegisters) {
    c.add(field,
          fmt::format("register r{} does not exist (r0..r{})", reg.index, kNumRegisters - 1));
  }
}

namespace {

// The one integer element a register is loaded from or stored to.
void require_register_word(Checker& c, std::string_view name, const AccessPattern& ap) {
  if (ap.total_elements() != 1)
    c.add(name, fmt::format("a register moves one element, not {}", shape_of(ap)));
  c.require_integer(name, ap, "a 32-bit register");
  if (ap.is_dynamic()) c.add(name, "a register's own load or store cannot be register-relative");
}

}  // namespace

void check_op(Checker& c, const RegSet& op) {
  require_register(c, "dst", op.dst);
}

void check_op(Checker& c, const RankId& op) {
  require_register(c, "dst", op.dst);
}

void check_op(Checker& c, const RingRankId& op) {
  require_register(c, "dst", op.dst);
  if (op.step_reg.present()) require_register(c, "step_reg", op.step_reg);
  if ((op.group_size == 0) != op.groups.empty() ||
      (op.group_size != 0 && op.groups.size() % op.group_size != 0))
    c.add("groups", fmt::format("{} ranks in groups of {} (whole groups, or none)",
                                op.groups.size(), op.group_size));
}

void check_op(Checker& c, const RegAdd& op) {
  require_register(c, "dst", op.dst);
  require_register(c, "src", op.src);
}

void check_op(Checker& c, const RegLoad& op) {
  require_register(c, "dst", op.dst);
  require_register_word(c, "src", op.src);
}

void check_op(Checker& c, const RegStore& op) {
  require_register_word(c, "dst", op.dst);
  require_register(c, "src", op.src);
}

void check_op(Checker& c, const Branch& op) {
  if (op.cond == BranchCond::kAlways) {
    if (op.a.present() || op.b.present())
      c.add("cond", "an unconditional branch compares no registers (a and b are none)");
    return;
  }
  require_register(c, "a", op.a);
  if (op.b.present()) require_register(c, "b", op.b);
}

}  // namespace trnsim::isa::validate_detail
