// The sequencer's control operations: its 32-bit registers and branches, which make loops
// whose trip count is known only at run time (NKI 0.6's nl.fori_loop / nl.while_loop over
// nisa.register_* values). Declared as every operation is (isa/operations.h explains the
// traits). Registers are per queue; a branch's target is a program index on its own queue.
// Part of the public header isa/isa.h, through isa/operations.h; include that.
#pragma once

#include <cstdint>
#include <string_view>

#include "isa/types.h"

namespace trnsim::isa {

// dst = imm.
struct RegSet {
  static constexpr std::string_view kName = "reg_set";
  static constexpr OpClass kClass = OpClass::kControl;
  static constexpr std::uint8_t kEngines = kAnyQueue;
  friend bool operator==(const RegSet&, const RegSet&) = default;
  Reg dst;
  std::int32_t imm = 0;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kAttr);
    v("imm", imm, Role::kAttr);
  }
};

// dst = the rank of the launch this core's program runs for (NKI 0.6
// nki.collectives.rank_id: 0 for a launch of one rank).
struct RankId {
  static constexpr std::string_view kName = "rank_id";
  static constexpr OpClass kClass = OpClass::kControl;
  static constexpr std::uint8_t kEngines = kAnyQueue;
  friend bool operator==(const RankId&, const RankId&) = default;
  Reg dst;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kAttr);
  }
};

// dst = the rank whose data a ring permute (collective permute without pairs) has brought to
// this rank after `step` (+ register `step_reg` when present) steps: the member `step`
// places before this rank in its replica group, cyclically (NKI 0.6
// collective_permute_implicit_current_processing_rank_id; step 0 is the rank itself).
// `groups` as isa::Collective's (none: one group of every rank).
struct RingRankId {
  static constexpr std::string_view kName = "ring_rank_id";
  static constexpr OpClass kClass = OpClass::kControl;
  static constexpr std::uint8_t kEngines = kAnyQueue;
  friend bool operator==(const RingRankId&, const RingRankId&) = default;
  Reg dst, step_reg;
  std::int32_t step = 0;
  std::vector<std::uint32_t> groups;
  std::uint32_t group_size = 0;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kAttr);
    v("step_reg", step_reg, Role::kAttr);
    v("step", step, Role::kAttr);
    v("groups", groups, Role::kAttr);
    v("group_size", group_size, Role::kAttr);
  }
};

// dst = src + imm (wrapping at 32 bits); imm 0 is a move.
struct RegAdd {
  static constexpr std::string_view kName = "reg_add";
  static constexpr OpClass kClass = OpClass::kControl;
  static constexpr std::uint8_t kEngines = kAnyQueue;
  friend bool operator==(const RegAdd&, const RegAdd&) = default;
  Reg dst, src;
  std::int32_t imm = 0;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kAttr);
    v("src", src, Role::kAttr);
    v("imm", imm, Role::kAttr);
  }
};

// dst = the one integer element of src (SBUF or HBM), by value, wrapping to 32 bits.
struct RegLoad {
  static constexpr std::string_view kName = "reg_load";
  static constexpr OpClass kClass = OpClass::kControl;
  static constexpr std::uint8_t kEngines = kAnyQueue;
  friend bool operator==(const RegLoad&, const RegLoad&) = default;
  Reg dst;
  AccessPattern src;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kAttr);
    v("src", src, Role::kRead);
  }
};

// The one integer element of dst (SBUF or HBM) = src's low bytes (dst's width).
struct RegStore {
  static constexpr std::string_view kName = "reg_store";
  static constexpr OpClass kClass = OpClass::kControl;
  static constexpr std::uint8_t kEngines = kAnyQueue;
  friend bool operator==(const RegStore&, const RegStore&) = default;
  AccessPattern dst;
  Reg src;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("src", src, Role::kAttr);
  }
};

// Continue at program index `target` (an instruction of this queue) when `cond` holds for
// register a against register b, or against imm when b is none; else at the next one.
struct Branch {
  static constexpr std::string_view kName = "branch";
  static constexpr OpClass kClass = OpClass::kControl;
  static constexpr std::uint8_t kEngines = kAnyQueue;
  friend bool operator==(const Branch&, const Branch&) = default;
  BranchCond cond = BranchCond::kAlways;
  Reg a, b;
  std::int32_t imm = 0;
  std::uint32_t target = 0;
  template <class V>
  void fields(V&& v) {
    v("cond", cond, Role::kAttr);
    v("a", a, Role::kAttr);
    v("b", b, Role::kAttr);
    v("imm", imm, Role::kAttr);
    v("target", target, Role::kAttr);
  }
};

}  // namespace trnsim::isa
