#include "isa/isa.h"

#include <algorithm>
#include <array>
#include <limits>
#include <type_traits>
#include <utility>

#include "util/enum_names.h"

namespace trnsim::isa {
namespace {

// Name tables are indexed by enumerator value; the static_asserts tie their sizes to the
// enum counts so that adding an enumerator without a name fails to compile.
constexpr std::array<std::string_view, kNumEngines> kEngineNames = {"tensor", "vector", "scalar",
                                                                    "gpsimd", "sync",   "dma"};
constexpr std::array<std::string_view, kNumMemories> kMemoryNames = {"hbm", "sbuf", "psum"};

constexpr std::array<std::string_view, kNumAluOps> kAluOpNames = {
    "bypass",      "add",           "subtract",   "multiply",    "divide",      "maximum",
    "minimum",     "abs_max",       "abs_min",    "power",       "equal",       "not_equal",
    "greater",     "greater_equal", "less",       "less_equal",  "logical_and", "logical_or",
    "logical_xor", "bitwise_and",   "bitwise_or", "bitwise_xor", "left_shift",  "right_shift",
    "average",     "invert",        "mod",        "fmod",
};
static_assert(kAluOpNames.back() == "fmod", "kAluOpNames must follow the AluOp order");

constexpr std::array<std::string_view, kNumActivationFuncs> kActivationNames = {
    "copy",
    "exp",
    "log",
    "tanh",
    "sigmoid",
    "relu",
    "gelu",
    "gelu_apprx_tanh",
    "gelu_apprx_sigmoid",
    "silu",
    "softplus",
    "mish",
    "erf",
    "sqrt",
    "rsqrt",
    "square",
    "reciprocal",
    "sin",
    "cos",
    "arctan",
    "abs",
    "sign",
    "prelu",
    "gelu_dx",
    "gelu_apprx_sigmoid_dx",
    "silu_dx",
    "erf_dx",
};
static_assert(kActivationNames.back() == "erf_dx",
              "kActivationNames must follow the ActivationFunc order");

constexpr std::array<std::string_view, kNumAccumulateModes> kAccumulateNames = {"overwrite",
                                                                                "accumulate"};
constexpr std::array<std::string_view, kNumRoundingModes> kRoundingNames = {"rne", "sr"};
constexpr std::array<std::string_view, kNumPerfModes> kPerfModeNames = {"none", "double_row"};
constexpr std::array<std::string_view, kNumDmaAccumulates> kDmaAccumulateNames = {"none", "add"};
constexpr std::array<std::string_view, kNumIndirectModes> kIndirectNames = {"gather", "scatter"};
constexpr std::array<std::string_view, kNumOobModes> kOobModeNames = {"error", "skip"};
constexpr std::array<std::string_view, kNumReduceCmds> kReduceCmdNames = {
    "idle", "reset", "reduce", "reset_reduce", "load_reduce"};
constexpr std::array<std::string_view, kNumCollectiveKinds> kCollectiveKindNames = {
    "all_reduce", "all_gather",   "reduce_scatter", "all_to_all",
    "permute",    "all_gather_v", "all_to_all_v",   "permute_reduce"};
constexpr std::array<std::string_view, kNumBranchConds> kBranchCondNames = {"always", "lt", "ge",
                                                                            "eq", "ne"};

std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    return b > 0 ? std::numeric_limits<std::int64_t>::max()
                 : std::numeric_limits<std::int64_t>::min();
  }
  return sum;
}

std::int64_t saturating_mul(std::int64_t a, std::int64_t b) {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) {
    return (a < 0) != (b < 0) ? std::numeric_limits<std::int64_t>::min()
                              : std::numeric_limits<std::int64_t>::max();
  }
  return product;
}

// Dims beyond the array are never read, whatever num_dims claims.
int used_dims(std::uint8_t num_dims) {
  return std::min<int>(num_dims, kMaxFreeDims);
}

bool same_used_dims(std::uint8_t num_dims, const std::array<Dim, kMaxFreeDims>& a,
                    const std::array<Dim, kMaxFreeDims>& b) {
  const int n = used_dims(num_dims);
  return std::equal(a.begin(), a.begin() + n, b.begin());
}

template <std::size_t... I>
std::optional<Operation> make_operation_impl(std::string_view mnemonic, std::index_sequence<I...>) {
  std::optional<Operation> result;
  // Short-circuits at the first alternative whose kName matches.
  (void)((std::variant_alternative_t<I, Operation>::kName == mnemonic
              ? (result.emplace(std::in_place_index<I>), true)
              : false) ||
         ...);
  return result;
}

}  // namespace

std::string_view engine_name(Engine e) {
  return util::enum_name(kEngineNames, e);
}
std::optional<Engine> engine_from_name(std::string_view name) {
  return util::enum_from_name<Engine>(kEngineNames, name);
}
std::string_view memory_name(Memory m) {
  return util::enum_name(kMemoryNames, m);
}
std::optional<Memory> memory_from_name(std::string_view name) {
  return util::enum_from_name<Memory>(kMemoryNames, name);
}
std::string_view alu_op_name(AluOp op) {
  return util::enum_name(kAluOpNames, op);
}
std::optional<AluOp> alu_op_from_name(std::string_view name) {
  return util::enum_from_name<AluOp>(kAluOpNames, name);
}
std::string_view activation_name(ActivationFunc f) {
  return util::enum_name(kActivationNames, f);
}
std::optional<ActivationFunc> activation_from_name(std::string_view name) {
  return util::enum_from_name<ActivationFunc>(kActivationNames, name);
}
std::string_view accumulate_mode_name(AccumulateMode m) {
  return util::enum_name(kAccumulateNames, m);
}
std::string_view rounding_mode_name(RoundingMode m) {
  return util::enum_name(kRoundingNames, m);
}
std::string_view perf_mode_name(MatmulPerfMode m) {
  return util::enum_name(kPerfModeNames, m);
}
std::string_view collective_kind_name(CollectiveKind k) {
  return util::enum_name(kCollectiveKindNames, k);
}
std::string_view dma_accumulate_name(DmaAccumulate m) {
  return util::enum_name(kDmaAccumulateNames, m);
}
std::string_view indirect_mode_name(IndirectMode m) {
  return util::enum_name(kIndirectNames, m);
}
std::string_view oob_mode_name(OobMode m) {
  return util::enum_name(kOobModeNames, m);
}
std::string_view reduce_cmd_name(ReduceCmd c) {
  return util::enum_name(kReduceCmdNames, c);
}

std::string_view branch_cond_name(BranchCond c) {
  return util::enum_name(kBranchCondNames, c);
}

std::string_view op_name(const Operation& op) {
  return std::visit([](const auto& o) { return std::decay_t<decltype(o)>::kName; }, op);
}

bool meets_other_cores(const Operation& op) {
  return std::holds_alternative<SendRecv>(op) || std::holds_alternative<Collective>(op);
}

EngineState engine_state(const Operation& op) {
  return std::visit(
      [](const auto& o) {
        using Op = std::decay_t<decltype(o)>;
        if constexpr (requires { Op::kState; }) {
          return Op::kState;
        } else {
          return EngineState::kNone;
        }
      },
      op);
}

std::uint8_t op_engines(const Operation& op) {
  return std::visit([](const auto& o) { return std::decay_t<decltype(o)>::kEngines; }, op);
}

std::string_view op_class_name(OpClass c) {
  static constexpr std::array<std::string_view, 6> kNames = {
      "matmul", "transpose", "elementwise", "dma_transfer", "sequencer", "control"};
  return util::enum_name(kNames, c);
}

std::optional<DmaSides> dma_sides(const Operation& op) {
  return std::visit(
      [](const auto& o) -> std::optional<DmaSides> {
        using Op = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<Op, DmaCompute>) {
          // The first source stands for all (they have dst's element count).
          return DmaSides{&o.dst, o.srcs.empty() ? &o.dst : &o.srcs.front()};
        } else if constexpr (Op::kClass == OpClass::kDmaTransfer) {
          return DmaSides{&o.dst, &o.src};
        } else {
          return std::nullopt;
        }
      },
      op);
}

std::optional<Operation> make_operation(std::string_view mnemonic) {
  return make_operation_impl(mnemonic, std::make_index_sequence<std::variant_size_v<Operation>>{});
}

// ---------------------------------------------------------------------------------------
// AccessPattern

std::uint64_t AccessPattern::free_elements_of_dims() const {
  std::uint64_t product = 1;
  for (int k = 0; k < used_dims(num_dims); ++k) {
    if (__builtin_mul_overflow(product, std::uint64_t{dims[k].count}, &product)) {
      return std::numeric_limits<std::uint64_t>::max();
    }
  }
  return product;
}

bool AccessPattern::is_contiguous() const {
  // Walk minor to major: each dim that is actually traversed (count > 1) must step by the
  // number of elements covered by the dims inside it. Count-1 dims never move, so their
  // step does not matter.
  std::int64_t span = 1;
  for (int k = used_dims(num_dims) - 1; k >= 0; --k) {
    if (dims[k].count == 1) continue;
    if (dims[k].step != span) return false;
    span = saturating_mul(span, std::int64_t{dims[k].count});
  }
  return true;
}

std::pair<std::int64_t, std::int64_t> AccessPattern::byte_span() const {
  const auto origin = offset > std::uint64_t(std::numeric_limits<std::int64_t>::max())
                          ? std::numeric_limits<std::int64_t>::max()
                          : std::int64_t(offset);
  // Extreme element offsets (relative to `offset`) reached by the pattern.
  std::int64_t lowest = 0;
  std::int64_t highest = 0;
  auto extend = [&](std::int64_t step, std::uint32_t count) {
    if (count == 0) return false;
    const std::int64_t reach = saturating_mul(step, std::int64_t{count} - 1);
    (reach < 0 ? lowest : highest) = saturating_add(reach < 0 ? lowest : highest, reach);
    return true;
  };
  for (int k = 0; k < used_dims(num_dims); ++k) {
    if (!extend(dims[k].step, dims[k].count)) return {origin, origin};  // touches nothing
  }
  if (memory == Memory::kHbm && !extend(partition_step, partitions)) return {origin, origin};
  const auto bytes = std::int64_t(element_bytes());
  return {saturating_add(origin, saturating_mul(lowest, bytes)),
          saturating_add(origin, saturating_mul(saturating_add(highest, 1), bytes))};
}

bool operator==(const AccessPattern& a, const AccessPattern& b) {
  return a.memory == b.memory && a.dtype == b.dtype && a.offset == b.offset &&
         a.start_partition == b.start_partition && a.partitions == b.partitions &&
         a.partition_step == b.partition_step && a.num_dims == b.num_dims &&
         same_used_dims(a.num_dims, a.dims, b.dims) && a.dyn_reg == b.dyn_reg &&
         (!a.is_dynamic() || a.dyn_scale == b.dyn_scale);
}

bool operator==(const AffinePattern& a, const AffinePattern& b) {
  return a.num_dims == b.num_dims && same_used_dims(a.num_dims, a.dims, b.dims);
}

}  // namespace trnsim::isa
