// Internals shared by the assembly printer (asm_print.cpp) and parser (asm_parse.cpp,
// asm_line_parser.cpp); not part of the public header isa/asm.h.
#pragma once

#include <array>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "isa/isa.h"

namespace trnsim::isa::asm_detail {

// Parser limits: every loop is bounded by the input length anyway; these keep memory and
// error behaviour sane on hostile input (the fuzzer feeds arbitrary bytes).
constexpr std::size_t kMaxLineBytes = 1u << 20;
constexpr std::size_t kMaxStringBytes = 4096;
constexpr std::size_t kMaxListEntries = 4096;
constexpr std::size_t kMaxSemaphoreClauses = 64;

// Words after the fields of an instruction; no operation may name a field like these
// (a test checks that).
constexpr std::array<std::string_view, 4> kClauseKeywords = {"wait", "signal", "rounding", "name"};

constexpr std::uint32_t kCanonicalNanBits = 0x7fc00000u;

// ---------------------------------------------------------------------------------------
// Enum spellings: one table row per attribute enum (its number of values, what it is
// called in errors, and its name function); adding an enum is one line.

template <class E>
struct EnumSpelling {
  int count;
  std::string_view what;
  std::string_view (*name)(E);
};

inline constexpr std::tuple kEnumSpellings{
    EnumSpelling<AluOp>{kNumAluOps, "ALU operator", alu_op_name},
    EnumSpelling<ActivationFunc>{kNumActivationFuncs, "activation function", activation_name},
    EnumSpelling<AccumulateMode>{kNumAccumulateModes, "accumulate mode", accumulate_mode_name},
    EnumSpelling<MatmulPerfMode>{kNumPerfModes, "matmul perf mode", perf_mode_name},
    EnumSpelling<DmaAccumulate>{kNumDmaAccumulates, "DMA accumulate mode", dma_accumulate_name},
    EnumSpelling<IndirectMode>{kNumIndirectModes, "indirect mode", indirect_mode_name},
    EnumSpelling<OobMode>{kNumOobModes, "out-of-bounds mode", oob_mode_name},
    EnumSpelling<ReduceCmd>{kNumReduceCmds, "reduce command", reduce_cmd_name},
    EnumSpelling<RoundingMode>{kNumRoundingModes, "rounding mode", rounding_mode_name},
    EnumSpelling<BranchCond>{kNumBranchConds, "branch condition", branch_cond_name},
    EnumSpelling<CollectiveKind>{kNumCollectiveKinds, "collective kind", collective_kind_name},
};

// The row of E (a compile error when E has none).
template <class E>
constexpr const EnumSpelling<E>& kEnumSpelling = std::get<EnumSpelling<E>>(kEnumSpellings);

// The spelling of one value of an attribute enum.
template <class E>
std::string_view enum_name(E value) {
  return kEnumSpelling<E>.name(value);
}

// Every spelling of an attribute enum, in value order.
template <class E>
std::vector<std::string_view> enum_spellings() {
  std::vector<std::string_view> names;
  for (int i = 0; i < kEnumSpelling<E>.count; ++i) names.push_back(enum_name(static_cast<E>(i)));
  return names;
}

// Operand access patterns are always printed (even when equal to the default pattern), so
// that an instruction line always shows what it touches; everything else is printed only
// when it differs from the default.
template <class T>
constexpr bool kAlwaysPrinted = std::is_same_v<T, AccessPattern>;

inline bool is_bare_file_char(char c) {
  // c != '\0' first: strchr finds the terminator of its own string.
  return c != '\0' &&
         (std::isalnum(static_cast<unsigned char>(c)) || std::strchr("_./+-~", c) != nullptr);
}

}  // namespace trnsim::isa::asm_detail
