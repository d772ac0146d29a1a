// Text assembly printer: the inverse of the parser (asm_parse.cpp). The syntax is documented
// (with a grammar) in docs/isa.md. Written once per field type and driven by each operation's
// fields() visitor, so a new operation needs no code here.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <type_traits>

#include "isa/asm.h"
#include "isa/asm_detail.h"

namespace trnsim::isa {

namespace {

using namespace asm_detail;

// Shortest text that parses back to the same float bits.
void print_float(std::string& out, float value) {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  if (value != value) {
    out += bits == kCanonicalNanBits ? std::string("nan") : fmt::format("nan(0x{:08x})", bits);
    return;
  }
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

void print_string(std::string& out, std::string_view text) {
  out += '"';
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;  // printable ASCII and UTF-8 bytes as they are
    }
  }
  out += '"';
}

void print_dims(std::string& out, std::uint8_t num_dims,
                const std::array<Dim, kMaxFreeDims>& dims) {
  out += '[';
  for (int k = 0; k < std::min<int>(num_dims, kMaxFreeDims); ++k) {
    if (k > 0) out += ',';
    out += fmt::format("[{},{}]", dims[k].step, dims[k].count);
  }
  out += ']';
}

// r5, or none.
void print_value(std::string& out, Reg reg) {
  out += reg.present() ? fmt::format("r{}", reg.index) : std::string("none");
}

// A signed term: "+r3*2048", "-1", "+7".
std::string signed_term(std::int64_t value) {
  return value < 0 ? fmt::format("{}", value) : fmt::format("+{}", value);
}

void print_value(std::string& out, const AccessPattern& ap) {
  out += memory_name(ap.memory);
  out +=
      fmt::format("[p{}:{}", ap.start_partition, std::uint64_t{ap.start_partition} + ap.partitions);
  if (ap.partition_step != 0) out += fmt::format("x{}", ap.partition_step);
  if (ap.memory == Memory::kHbm) {
    out += fmt::format(", addr={:#x}", ap.offset);
  } else {
    out += fmt::format(", off={}", ap.offset);
  }
  if (ap.is_dynamic()) out += fmt::format("+r{}*{}", ap.dyn_reg.index, ap.dyn_scale);
  out += ", ";
  out += numerics::name(ap.dtype);
  out += ", ";
  print_dims(out, ap.num_dims, ap.dims);
  out += ']';
}

void print_value(std::string& out, const std::optional<AccessPattern>& ap) {
  if (ap) {
    print_value(out, *ap);
  } else {
    out += "none";
  }
}

void print_value(std::string& out, float value) {
  print_float(out, value);
}

void print_value(std::string& out, const ScalarOperand& operand) {
  std::visit([&](const auto& alternative) { print_value(out, alternative); }, operand);
}

void print_value(std::string& out, bool value) {
  out += value ? "true" : "false";
}

template <class T>
requires std::is_integral_v<T>
void print_value(std::string& out, T value) {
  // Widened so that uint8_t prints as a number, not a character.
  if constexpr (std::is_signed_v<T>) {
    out += fmt::format("{}", std::int64_t{value});
  } else {
    out += fmt::format("{}", std::uint64_t{value});
  }
}

template <class E>
requires std::is_enum_v<E>
void print_value(std::string& out, E value) {
  out += enum_name(value);
}

void print_value(std::string& out, const AffinePattern& pattern) {
  print_dims(out, pattern.num_dims, pattern.dims);
}

// [a,b,...]: the items of a list, each printed by print_item, between `separator`s.
template <class Range, class PrintItem>
void print_list(std::string& out, const Range& items, std::string_view separator,
                PrintItem print_item) {
  out += '[';
  bool first = true;
  for (const auto& item : items) {
    if (!first) out += separator;
    first = false;
    print_item(item);
  }
  out += ']';
}

void print_value(std::string& out, const std::array<std::uint8_t, 32>& mask) {
  print_list(out, mask, ",", [&](std::uint8_t bit) { out += fmt::format("{}", bit); });
}

void print_value(std::string& out, const std::vector<AccessPattern>& aps) {
  print_list(out, aps, ", ", [&](const AccessPattern& ap) { print_value(out, ap); });
}

void print_value(std::string& out, const std::vector<float>& values) {
  print_list(out, values, ",", [&](float v) { print_float(out, v); });
}

void print_value(std::string& out, const std::vector<std::uint32_t>& values) {
  print_list(out, values, ",", [&](std::uint32_t v) { out += std::to_string(v); });
}

void print_value(std::string& out, const std::string& text) {
  print_string(out, text);
}

// Equality that tells -0.0 from 0.0 and compares NaNs by bits, so that omitting a field
// "equal to its default" never loses information.
bool same_bits(float a, float b) {
  return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
}
bool same_value(float a, float b) {
  return same_bits(a, b);
}
bool same_value(const ScalarOperand& a, const ScalarOperand& b) {
  if (a.index() != b.index()) return false;
  if (const float* fa = std::get_if<float>(&a)) return same_bits(*fa, std::get<float>(b));
  return a == b;
}
bool same_value(const std::vector<float>& a, const std::vector<float>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), same_bits);
}
template <class T>
bool same_value(const T& a, const T& b) {
  return a == b;
}

template <class Op>
void print_fields(std::string& out, const Op& op) {
  // fields() is a non-const visitor; visiting copies keeps the caller's object untouched.
  Op value = op;
  Op defaults{};
  std::vector<const void*> default_members;
  defaults.fields(
      [&](std::string_view, auto& member, Role) { default_members.push_back(&member); });
  std::size_t index = 0;
  bool first = true;
  value.fields([&](std::string_view name, auto& member, Role) {
    using T = std::decay_t<decltype(member)>;
    const auto& default_member = *static_cast<const T*>(default_members[index++]);
    if (!kAlwaysPrinted<T> && same_value(member, default_member)) return;
    out += first ? " " : ", ";
    first = false;
    out += name;
    out += '=';
    print_value(out, member);
  });
}

void print_origin(std::string& out, const Origin& origin) {
  out += " @";
  if (origin == Origin{}) {
    out += '?';
    return;
  }
  const bool bare = !origin.file.empty() &&
                    std::all_of(origin.file.begin(), origin.file.end(), is_bare_file_char);
  if (bare) {
    out += origin.file;
  } else {
    print_string(out, origin.file);
  }
  out += fmt::format(":{}:{}", origin.line, origin.column);
}

}  // namespace

std::string print_instruction(const Instruction& inst) {
  std::string out;
  out += '[';
  out += engine_name(inst.queue.engine);
  if (inst.queue.engine == Engine::kDma || inst.queue.index != 0) {
    out += fmt::format(".{}", inst.queue.index);
  }
  out += "] ";
  out += op_name(inst.op);
  std::visit([&](const auto& op) { print_fields(out, op); }, inst.op);
  auto print_list = [&](std::string_view keyword, const auto& items, auto&& print_item) {
    if (items.empty()) return;
    out += ' ';
    out += keyword;
    for (std::size_t i = 0; i < items.size(); ++i) {
      out += i == 0 ? " " : ", ";
      print_item(items[i]);
    }
  };
  print_list("wait", inst.waits, [&](const SemWait& w) {
    if (w.base.present()) {
      out += fmt::format("s{}>=r{}{}", w.sem, w.base.index,
                         signed_term(static_cast<std::int32_t>(w.value)));
    } else {
      out += fmt::format("s{}>={}", w.sem, w.value);
    }
  });
  print_list("signal", inst.signals,
             [&](const SemSignal& s) { out += fmt::format("s{}+={}", s.sem, s.increment); });
  if (inst.rounding != RoundingMode::kNearestEven) {
    out += " rounding=";
    out += rounding_mode_name(inst.rounding);
  }
  if (!inst.name.empty()) {
    out += " name=";
    print_string(out, inst.name);
  }
  print_origin(out, inst.origin);
  return out;
}

std::uint64_t HbmTensor::elements() const {
  std::uint64_t n = 1;
  for (const std::uint64_t d : shape) n *= d;
  return n;
}

std::uint64_t HbmTensor::bytes() const {
  return elements() * numerics::storage_bytes(dtype);
}

std::string HbmTensor::to_string() const {
  return fmt::format("{}@{:#x}:{}[{}]", name, address, numerics::name(dtype),
                     fmt::join(shape, ","));
}

std::string print_program(const Program& program) {
  std::string out;
  if (program.seed != 0) out += fmt::format(".seed {}\n", program.seed);
  for (const HbmTensor& t : program.hbm) out += fmt::format(".hbm {}\n", t.to_string());
  for (const Instruction& inst : program.instructions) {
    out += print_instruction(inst);
    out += '\n';
  }
  return out;
}

}  // namespace trnsim::isa
