// The one walk over an operation's fields and memory operands. Everything that inspects or
// rewrites operands (validation, hazard detection, cost formulas, the compiler's relocation
// and dependencies, the profiler, operand names in errors) goes through these functions
// instead of spelling out operations or the forms an operand can take.
// Part of the public header isa/isa.h; include that.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "isa/operations.h"

namespace trnsim::isa {

// How an operation holds an access pattern.
enum class OperandForm : std::uint8_t {
  kTensor,     // an AccessPattern field, or an optional one that is present
  kScalar,     // a ScalarOperand holding a [P, 1] tensor broadcast along the free dims
  kListEntry,  // one entry of a pattern list (custom_op's inputs and outputs)
};

// One memory operand as the walk reports it.
struct OperandRef {
  std::string_view name;  // the field's name, as in assembly
  Role role = Role::kRead;
  OperandForm form = OperandForm::kTensor;
  int list_index = -1;  // position in the field's list (kListEntry), -1 otherwise

  bool reads() const { return role == Role::kRead || role == Role::kReadWrite; }
  bool writes() const { return role == Role::kWrite || role == Role::kReadWrite; }
  // "name", or "name[i]" for a list entry: how errors and reports name the operand.
  std::string label() const {
    return list_index < 0 ? std::string(name)
                          : std::string(name) + "[" + std::to_string(list_index) + "]";
  }
};

namespace detail {
template <class Op>
inline constexpr bool kIsOperation = std::is_same_v<std::remove_const_t<Op>, Operation>;

// The operand forms: calls f(pattern, ref) for each access pattern `member` holds.
template <class AP, class F>
void visit_member(std::string_view name, AP& member, Role role, F& f) {
  using M = std::remove_const_t<AP>;
  if constexpr (std::is_same_v<M, AccessPattern>) {
    f(member, OperandRef{name, role, OperandForm::kTensor, -1});
  } else if constexpr (std::is_same_v<M, ScalarOperand>) {
    if (auto* ap = std::get_if<AccessPattern>(&member))
      f(*ap, OperandRef{name, role, OperandForm::kScalar, -1});
  } else if constexpr (std::is_same_v<M, std::optional<AccessPattern>>) {
    if (member) f(*member, OperandRef{name, role, OperandForm::kTensor, -1});
  } else if constexpr (std::is_same_v<M, std::vector<AccessPattern>>) {
    for (std::size_t i = 0; i < member.size(); ++i)
      f(member[i], OperandRef{name, role, OperandForm::kListEntry, static_cast<int>(i)});
  }
}
}  // namespace detail

// Calls f(name, member, role) for every field of `op` (operands and attributes), in
// assembly order. `op` is a concrete operation or an Operation, const or not; a const one
// hands f const members. (fields() is one non-const member template because the parser
// fills operations through it; a const walk only reads.)
template <class Op, class F>
void for_each_field(Op& op, F&& f) {
  if constexpr (detail::kIsOperation<Op>) {
    std::visit([&](auto& concrete) { for_each_field(concrete, f); }, op);
  } else if constexpr (std::is_const_v<Op>) {
    const_cast<std::remove_const_t<Op>&>(op).fields(
        [&](std::string_view name, const auto& member, Role role) { f(name, member, role); });
  } else {
    op.fields(f);
  }
}

// Calls f(pattern, OperandRef) for every access pattern `op` holds: plain operands, tensor
// ScalarOperands, present optional operands and the entries of operand lists. `op` is a
// concrete operation or an Operation; const or not (then f gets AccessPattern&, which it may
// rewrite: the compiler relocates operands this way).
template <class Op, class F>
void for_each_operand(Op& op, F&& f) {
  for_each_field(op, [&](std::string_view name, auto& member, Role role) {
    if (role != Role::kAttr) detail::visit_member(name, member, role, f);
  });
}

}  // namespace trnsim::isa
