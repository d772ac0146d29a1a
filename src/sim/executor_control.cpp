// Control flow in the event loop (executor_detail.h): the sequencer's registers, branches,
// register-relative operands and waits. The event loop keeps the program counter; this file
// computes what the registers decide.
#include <fmt/core.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "isa/validate.h"
#include "sim/executor_detail.h"

namespace trnsim::sim::executor_detail {

std::int64_t wait_target(const isa::SemWait& wait, const Registers& regs) {
  if (!wait.base.present()) return wait.value;
  return std::int64_t{static_cast<std::uint32_t>(regs[wait.base.index])} +
         static_cast<std::int32_t>(wait.value);
}

std::string bad_register(const isa::Instruction& inst) {
  std::string bad;
  const auto check = [&](isa::Reg r) {
    if (bad.empty() && r.present() && r.index >= isa::kNumRegisters)
      bad = fmt::format("register r{} does not exist (r0..r{})", r.index, isa::kNumRegisters - 1);
  };
  std::visit(
      [&](const auto& op) {
        using Op = std::decay_t<decltype(op)>;
        if constexpr (std::is_same_v<Op, isa::RegSet> || std::is_same_v<Op, isa::RankId>) {
          check(op.dst);
        } else if constexpr (std::is_same_v<Op, isa::RingRankId>) {
          check(op.dst);
          check(op.step_reg);
        } else if constexpr (std::is_same_v<Op, isa::RegAdd>) {
          check(op.dst);
          check(op.src);
        } else if constexpr (std::is_same_v<Op, isa::RegLoad>) {
          check(op.dst);
        } else if constexpr (std::is_same_v<Op, isa::RegStore>) {
          check(op.src);
        } else if constexpr (std::is_same_v<Op, isa::Branch>) {
          check(op.a);
          check(op.b);
        }
      },
      inst.op);
  isa::for_each_operand(
      inst.op, [&](const isa::AccessPattern& ap, const isa::OperandRef&) { check(ap.dyn_reg); });
  for (const isa::SemWait& w : inst.waits) check(w.base);
  return bad;
}

namespace {

// Moves one register-relative pattern to where its register puts it, as a static pattern.
void resolve_pattern(isa::AccessPattern& ap, std::string_view operand, const Registers& regs) {
  if (!ap.is_dynamic()) return;
  const std::int32_t value = regs[ap.dyn_reg.index];
  std::int64_t shift = 0, offset = 0;
  const bool overflows =
      __builtin_mul_overflow(std::int64_t{value}, ap.dyn_scale, &shift) ||
      ap.offset > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
      __builtin_add_overflow(static_cast<std::int64_t>(ap.offset), shift, &offset);
  if (overflows || offset < 0)
    throw std::runtime_error(fmt::format(
        "operand '{}': r{} = {} moves it {} bytes from offset {}, {} (register-relative operand "
        "out of range)",
        operand, ap.dyn_reg.index, value,
        overflows ? std::string("too many") : fmt::format("{}", shift), ap.offset,
        overflows ? "beyond 2^63" : "below 0"));
  ap.offset = static_cast<std::uint64_t>(offset);
  ap.dyn_reg = {};
  ap.dyn_scale = 0;
}

}  // namespace

std::string resolve_operands(const isa::Instruction& inst, std::size_t index, const Registers& regs,
                             const arch::ChipConfig& chip, isa::Instruction& out,
                             std::vector<std::uint64_t>& offsets) {
  out = inst;
  std::string moved;  // "'src' moved by r5 = 3" for each moved operand, for the errors
  isa::for_each_operand(out.op, [&](isa::AccessPattern& ap, const isa::OperandRef& ref) {
    if (!ap.is_dynamic()) return;
    const std::string label = ref.label();
    moved += fmt::format("{}'{}' moved by r{} = {}", moved.empty() ? "" : ", ", label,
                         ap.dyn_reg.index, regs[ap.dyn_reg.index]);
    resolve_pattern(ap, label, regs);
    offsets.push_back(ap.offset);
  });
  // The static rules at register value 0 were checked before the run; the moved operands
  // must keep them (bounds above all) where the registers put them now.
  const std::vector<isa::Violation> broken = isa::check_instruction(out, index, chip);
  if (broken.empty()) return moved;
  const isa::Violation& first = broken.front();
  throw std::runtime_error(
      fmt::format("{}: {}{} (register-relative operands are checked when they run)", moved,
                  first.operand.empty() ? "" : "operand '" + first.operand + "': ", first.message));
}

SimError with_moved_operands(const SimError& e, const std::string& moved) {
  if (!e.has_instruction()) return e;
  const SimError located(e.index(), e.op(), e.origin(), fmt::format("{} ({})", e.why(), moved),
                         e.diagnostics().front().notes);
  return e.has_core() ? SimError(e.core(), located) : located;
}

namespace {

bool holds(isa::BranchCond cond, std::int32_t a, std::int32_t b) {
  switch (cond) {
    case isa::BranchCond::kAlways:
      return true;
    case isa::BranchCond::kLess:
      return a < b;
    case isa::BranchCond::kGreaterEqual:
      return a >= b;
    case isa::BranchCond::kEqual:
      return a == b;
    case isa::BranchCond::kNotEqual:
      return a != b;
  }
  return false;
}

// The member `step` places before `rank` in its ring (its replica group, or every rank).
std::int32_t ring_rank(const isa::RingRankId& op, const Registers& regs, std::int32_t rank,
                       std::int32_t ranks) {
  std::vector<std::int32_t> ring;
  if (op.groups.empty()) {
    for (std::int32_t r = 0; r < ranks; ++r) ring.push_back(r);
  } else {
    const auto at = std::find(op.groups.begin(), op.groups.end(), static_cast<std::uint32_t>(rank));
    if (at == op.groups.end())
      throw std::runtime_error(fmt::format("ring_rank_id: rank {} is in no replica group", rank));
    const auto first = (at - op.groups.begin()) / op.group_size * op.group_size;
    for (std::uint32_t k = 0; k < op.group_size; ++k)
      ring.push_back(static_cast<std::int32_t>(op.groups[static_cast<std::size_t>(first) + k]));
  }
  const auto n = static_cast<std::int64_t>(ring.size());
  const std::int64_t place = std::find(ring.begin(), ring.end(), rank) - ring.begin();
  const std::int64_t step =
      std::int64_t{op.step} + (op.step_reg.present() ? regs[op.step_reg.index] : 0);
  return ring[static_cast<std::size_t>(((place - step) % n + n) % n)];
}

// Wrapping 32-bit addition, as the sequencer's ALU does.
std::int32_t wrapping_add(std::int32_t a, std::int32_t b) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
}

}  // namespace

std::optional<std::uint32_t> run_control(const isa::Instruction& inst, Registers& regs,
                                         OperandIO* io, std::int32_t rank, std::int32_t ranks) {
  if (const auto* set = std::get_if<isa::RegSet>(&inst.op)) {
    regs[set->dst.index] = set->imm;
  } else if (const auto* id = std::get_if<isa::RankId>(&inst.op)) {
    regs[id->dst.index] = rank;
  } else if (const auto* ring = std::get_if<isa::RingRankId>(&inst.op)) {
    regs[ring->dst.index] = ring_rank(*ring, regs, rank, ranks);
  } else if (const auto* add = std::get_if<isa::RegAdd>(&inst.op)) {
    regs[add->dst.index] = wrapping_add(regs[add->src.index], add->imm);
  } else if (const auto* load = std::get_if<isa::RegLoad>(&inst.op)) {
    if (io == nullptr)
      throw std::runtime_error(
          "reg_load reads a value from memory, which a timing-only run does not compute (the "
          "loop's trip count depends on data): run it functionally");
    const WordTile word = io->load_words(load->src);
    // By value, wrapping to 32 bits (a uint32 above 2^31 - 1 reads as negative).
    regs[load->dst.index] = static_cast<std::int32_t>(static_cast<std::uint32_t>(word.words.at(0)));
  } else if (const auto* store = std::get_if<isa::RegStore>(&inst.op)) {
    if (io != nullptr) io->store_words(store->dst, {1, 1, {regs[store->src.index]}});
  } else if (const auto* branch = std::get_if<isa::Branch>(&inst.op)) {
    const std::int32_t a = branch->a.present() ? regs[branch->a.index] : 0;
    const std::int32_t b = branch->b.present() ? regs[branch->b.index] : branch->imm;
    if (holds(branch->cond, a, b)) return branch->target;
  }
  return std::nullopt;
}

}  // namespace trnsim::sim::executor_detail
