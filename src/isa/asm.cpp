// Text assembly: printer and parser. The syntax is documented (with a grammar) in
// docs/isa.md. Both directions are written once per field type and driven by each
// operation's fields() visitor, so a new operation needs no code here.
#include "isa/asm.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <type_traits>

#include "util/edit_distance.h"

namespace trnsim::isa {

AsmError::AsmError(std::string file, std::uint32_t line, std::uint32_t column, std::string message)
    : std::runtime_error(fmt::format("{}:{}:{}: {}", file, line, column, message)),
      file_(std::move(file)),
      line_(line),
      column_(column),
      message_(std::move(message)) {}

namespace {

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
// Enum spellings, one trait per attribute enum.

template <class E>
struct EnumSpelling;
template <>
struct EnumSpelling<AluOp> {
  static constexpr int kCount = kNumAluOps;
  static constexpr std::string_view kWhat = "ALU operator";
  static std::string_view name(AluOp e) { return alu_op_name(e); }
};
template <>
struct EnumSpelling<ActivationFunc> {
  static constexpr int kCount = kNumActivationFuncs;
  static constexpr std::string_view kWhat = "activation function";
  static std::string_view name(ActivationFunc e) { return activation_name(e); }
};
template <>
struct EnumSpelling<AccumulateMode> {
  static constexpr int kCount = kNumAccumulateModes;
  static constexpr std::string_view kWhat = "accumulate mode";
  static std::string_view name(AccumulateMode e) { return accumulate_mode_name(e); }
};
template <>
struct EnumSpelling<MatmulPerfMode> {
  static constexpr int kCount = kNumPerfModes;
  static constexpr std::string_view kWhat = "matmul perf mode";
  static std::string_view name(MatmulPerfMode e) { return perf_mode_name(e); }
};
template <>
struct EnumSpelling<DmaAccumulate> {
  static constexpr int kCount = kNumDmaAccumulates;
  static constexpr std::string_view kWhat = "DMA accumulate mode";
  static std::string_view name(DmaAccumulate e) { return dma_accumulate_name(e); }
};
template <>
struct EnumSpelling<IndirectMode> {
  static constexpr int kCount = kNumIndirectModes;
  static constexpr std::string_view kWhat = "indirect mode";
  static std::string_view name(IndirectMode e) { return indirect_mode_name(e); }
};
template <>
struct EnumSpelling<RoundingMode> {
  static constexpr int kCount = kNumRoundingModes;
  static constexpr std::string_view kWhat = "rounding mode";
  static std::string_view name(RoundingMode e) { return rounding_mode_name(e); }
};

template <class E>
std::vector<std::string_view> enum_spellings() {
  std::vector<std::string_view> names;
  for (int i = 0; i < EnumSpelling<E>::kCount; ++i) {
    names.push_back(EnumSpelling<E>::name(static_cast<E>(i)));
  }
  return names;
}

// ---------------------------------------------------------------------------------------
// "Did you mean": the closest candidate within a small edit distance.

using util::edit_distance;

template <class Range>
std::string did_you_mean(std::string_view word, const Range& candidates) {
  // Long garbage words are not worth comparing (and would make this quadratic).
  if (word.empty() || word.size() > 64) return "";
  std::string_view best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (std::string_view candidate : candidates) {
    const std::size_t d = edit_distance(word, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best);
}

std::vector<std::string_view> mnemonics() {
  std::vector<std::string_view> names;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (names.push_back(std::variant_alternative_t<I, Operation>::kName), ...);
  }
  (std::make_index_sequence<std::variant_size_v<Operation>>{});
  return names;
}

// NKI names plus the short spellings people type; the latter only if parse_dtype really
// accepts them, so a suggestion always parses.
std::vector<std::string_view> dtype_names() {
  std::vector<std::string_view> names;
  for (const auto& row : numerics::all_dtypes()) names.push_back(row.name);
  for (std::string_view alias : {"fp32", "tf32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "e8m0",
                                 "i8", "i16", "i32", "u8", "u16", "u32", "mxfp8", "mxfp4"}) {
    if (numerics::parse_dtype(alias)) names.push_back(alias);
  }
  return names;
}

std::vector<std::string_view> engine_names() {
  std::vector<std::string_view> names;
  for (int i = 0; i < kNumEngines; ++i) names.push_back(engine_name(static_cast<Engine>(i)));
  return names;
}

// Display form of a word in an error message: bounded and without control bytes.
std::string quoted_word(std::string_view word) {
  std::string shown;
  for (char c : word.substr(0, 40)) {
    shown += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  }
  if (word.size() > 40) shown += "...";
  return "'" + shown + "'";
}

// ---------------------------------------------------------------------------------------
// Printer

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

void print_value(std::string& out, const AccessPattern& ap) {
  out += memory_name(ap.memory);
  out +=
      fmt::format("[p{}:{}", ap.start_partition, std::uint64_t{ap.start_partition} + ap.partitions);
  if (ap.partition_step != 0) out += fmt::format("x{}", ap.partition_step);
  if (ap.memory == Memory::kHbm) {
    out += fmt::format(", addr={:#x}, ", ap.offset);
  } else {
    out += fmt::format(", off={}, ", ap.offset);
  }
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
  out += EnumSpelling<E>::name(value);
}

void print_value(std::string& out, const AffinePattern& pattern) {
  print_dims(out, pattern.num_dims, pattern.dims);
}

void print_value(std::string& out, const std::array<std::uint8_t, 32>& mask) {
  out += '[';
  for (std::size_t i = 0; i < mask.size(); ++i) {
    if (i > 0) out += ',';
    out += fmt::format("{}", mask[i]);
  }
  out += ']';
}

void print_value(std::string& out, const std::vector<AccessPattern>& aps) {
  out += '[';
  for (std::size_t i = 0; i < aps.size(); ++i) {
    if (i > 0) out += ", ";
    print_value(out, aps[i]);
  }
  out += ']';
}

void print_value(std::string& out, const std::vector<float>& values) {
  out += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    print_float(out, values[i]);
  }
  out += ']';
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

// Operand access patterns are always printed (even when equal to the default pattern), so
// that an instruction line always shows what it touches; everything else is printed only
// when it differs from the default.
template <class T>
constexpr bool kAlwaysPrinted = std::is_same_v<T, AccessPattern>;

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

bool is_bare_file_char(char c) {
  // c != '\0' first: strchr finds the terminator of its own string.
  return c != '\0' &&
         (std::isalnum(static_cast<unsigned char>(c)) || std::strchr("_./+-~", c) != nullptr);
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

// ---------------------------------------------------------------------------------------
// Parser: one LineParser per line, character level, with the column of every token.

class LineParser {
 public:
  LineParser(std::string_view line, std::uint32_t line_number, const std::string& file)
      : line_(line), line_number_(line_number), file_(file) {}

  [[noreturn]] void fail_at(std::size_t position, const std::string& message) const {
    throw AsmError(file_, line_number_, column_of(position), message);
  }
  [[noreturn]] void fail(const std::string& message) const { fail_at(pos_, message); }

  std::uint32_t column_of(std::size_t position) const {
    return static_cast<std::uint32_t>(position + 1);
  }
  std::uint32_t line_number() const { return line_number_; }
  std::size_t position() const { return pos_; }
  const std::string& file() const { return file_; }

  // Spaces, tabs and a trailing '#' comment.
  void skip_space() {
    while (pos_ < line_.size() && (line_[pos_] == ' ' || line_[pos_] == '\t')) ++pos_;
    if (pos_ < line_.size() && line_[pos_] == '#') pos_ = line_.size();
  }
  bool at_end() {
    skip_space();
    return pos_ >= line_.size();
  }
  char peek() {
    skip_space();
    return pos_ < line_.size() ? line_[pos_] : '\0';
  }
  bool consume(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  bool consume(std::string_view text) {
    skip_space();
    if (line_.substr(pos_, text.size()) != text) return false;
    pos_ += text.size();
    return true;
  }
  void expect(char c, const std::string& message) {
    if (!consume(c)) fail(message);
  }
  // The next character without skipping spaces (for tokens that must be adjacent).
  char raw_peek() const { return pos_ < line_.size() ? line_[pos_] : '\0'; }
  void raw_expect(char c, const std::string& message) {
    if (raw_peek() != c) fail(message);
    ++pos_;
  }

  // [A-Za-z_][A-Za-z0-9_]*, or empty when the next character cannot start one.
  std::string_view identifier() {
    skip_space();
    const std::size_t start = pos_;
    auto is_start = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
    auto is_rest = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    if (pos_ < line_.size() && is_start(line_[pos_])) {
      ++pos_;
      while (pos_ < line_.size() && is_rest(line_[pos_])) ++pos_;
    }
    return line_.substr(start, pos_ - start);
  }
  std::string_view peek_identifier() {
    const std::size_t saved = pos_;
    const std::string_view word = identifier();
    pos_ = saved;
    return word;
  }

  // A run of characters that may belong to a number: letters, digits, '.', '_', '(' ')'
  // (for nan(0x...)) and a sign at the start or after an exponent letter.
  std::string_view number_token() {
    skip_space();
    const std::size_t start = pos_;
    if (pos_ < line_.size() && (line_[pos_] == '-' || line_[pos_] == '+')) ++pos_;
    while (pos_ < line_.size()) {
      const char c = line_[pos_];
      const char previous = line_[pos_ - (pos_ > start ? 1 : 0)];
      const bool exponent_sign =
          (c == '-' || c == '+') && pos_ > start &&
          (previous == 'e' || previous == 'E' || previous == 'p' || previous == 'P');
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '(' ||
          c == ')' || exponent_sign) {
        ++pos_;
      } else {
        break;
      }
    }
    return line_.substr(start, pos_ - start);
  }

  // Decimal or 0x-hex integer with optional '-', range-checked against T. `what` names the
  // value in errors. decimal_only is for places where an 'x' may follow the number.
  template <class T>
  T integer(std::string_view what, bool decimal_only = false) {
    skip_space();
    const std::size_t start = pos_;
    const bool negative = raw_peek() == '-';
    if (negative) ++pos_;
    int base = 10;
    if (!decimal_only && line_.substr(pos_, 2) == "0x") {
      base = 16;
      pos_ += 2;
    }
    const std::size_t digits_start = pos_;
    std::uint64_t magnitude = 0;
    bool overflow = false;
    while (pos_ < line_.size()) {
      const char c = line_[pos_];
      int digit = -1;
      if (c >= '0' && c <= '9') digit = c - '0';
      if (base == 16 && c >= 'a' && c <= 'f') digit = c - 'a' + 10;
      if (base == 16 && c >= 'A' && c <= 'F') digit = c - 'A' + 10;
      if (digit < 0) break;
      overflow = overflow || __builtin_mul_overflow(magnitude, std::uint64_t(base), &magnitude) ||
                 __builtin_add_overflow(magnitude, std::uint64_t(digit), &magnitude);
      ++pos_;
    }
    if (pos_ == digits_start) fail_at(start, fmt::format("expected an integer for {}", what));
    if (overflow) fail_at(start, fmt::format("integer overflow in {}", what));
    const auto out_of_range = [&] {
      std::int64_t lowest = 0;
      if constexpr (std::is_signed_v<T>) lowest = std::numeric_limits<T>::min();
      return fmt::format("integer {} out of range for {} ({}..{})",
                         line_.substr(start, pos_ - start), what, lowest,
                         static_cast<std::uint64_t>(std::numeric_limits<T>::max()));
    };
    if (negative) {
      if constexpr (std::is_signed_v<T>) {
        // |min| of a two's complement type is max + 1; negate via magnitude - 1 so that
        // the most negative value does not overflow.
        if (magnitude > static_cast<std::uint64_t>(std::numeric_limits<T>::max()) + 1) {
          fail_at(start, out_of_range());
        }
        if (magnitude == 0) return 0;
        return static_cast<T>(-static_cast<std::int64_t>(magnitude - 1) - 1);
      } else {
        if (magnitude != 0) fail_at(start, out_of_range());
        return 0;
      }
    }
    if (magnitude > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) {
      fail_at(start, out_of_range());
    }
    return static_cast<T>(magnitude);
  }

  float floating(std::string_view what) {
    skip_space();
    const std::size_t start = pos_;
    std::string_view token = number_token();
    if (token.empty()) fail_at(start, fmt::format("expected a number for {}", what));
    const auto invalid = [&] {
      fail_at(start, fmt::format("invalid number {} for {}", quoted_word(token), what));
    };
    bool negative = false;
    std::string_view body = token;
    if (body.front() == '-' || body.front() == '+') {
      negative = body.front() == '-';
      body.remove_prefix(1);
    }
    if (body == "inf") {
      return negative ? -std::numeric_limits<float>::infinity()
                      : std::numeric_limits<float>::infinity();
    }
    if (body == "nan" || body.starts_with("nan(")) {
      std::uint32_t bits = kCanonicalNanBits;
      if (body != "nan") {
        // nan(0xXXXXXXXX): the exact bits, sign included; a leading '-' is not allowed
        // then, as the bits already carry the sign.
        if (negative || !body.starts_with("nan(0x") || !body.ends_with(")")) invalid();
        const std::string_view hex = body.substr(6, body.size() - 7);
        const auto [end, error] = std::from_chars(hex.data(), hex.data() + hex.size(), bits, 16);
        if (hex.empty() || error != std::errc() || end != hex.data() + hex.size()) invalid();
        const float value = std::bit_cast<float>(bits);
        if (value == value) {
          fail_at(start, fmt::format("nan(0x{:08x}) is not a NaN bit pattern", bits));
        }
        return value;
      }
      return std::bit_cast<float>(bits | (negative ? 0x80000000u : 0u));
    }
    auto format = std::chars_format::general;
    if (body.starts_with("0x") || body.starts_with("0X")) {
      format = std::chars_format::hex;
      body.remove_prefix(2);
    }
    if (body.empty()) invalid();
    float value = 0.0f;
    const auto [end, error] =
        std::from_chars(body.data(), body.data() + body.size(), value, format);
    if (error == std::errc::result_out_of_range) {
      fail_at(start,
              fmt::format("number {} is out of the float range for {}", quoted_word(token), what));
    }
    if (error != std::errc() || end != body.data() + body.size()) invalid();
    return negative ? -value : value;
  }

  std::string string_literal(std::string_view what) {
    skip_space();
    const std::size_t start = pos_;
    if (raw_peek() != '"') fail(fmt::format("expected a quoted string for {}", what));
    ++pos_;
    std::string text;
    while (true) {
      if (pos_ >= line_.size()) fail_at(start, "unterminated string");
      const char c = line_[pos_];
      const auto byte = static_cast<unsigned char>(c);
      if (c == '"') {
        ++pos_;
        break;
      }
      if (byte < 0x20 || byte == 0x7f)
        fail("control character in string (use an escape like \\x09)");
      if (text.size() >= kMaxStringBytes) {
        fail_at(start, fmt::format("string longer than {} bytes", kMaxStringBytes));
      }
      if (c != '\\') {
        text += c;
        ++pos_;
        continue;
      }
      const std::size_t escape_start = pos_;
      ++pos_;
      const char kind = raw_peek();
      ++pos_;
      if (kind == '"' || kind == '\\') {
        text += kind;
      } else if (kind == 'n') {
        text += '\n';
      } else if (kind == 't') {
        text += '\t';
      } else if (kind == 'x') {
        const std::string_view hex = line_.substr(std::min(pos_, line_.size()), 2);
        unsigned value = 0;
        const auto [end, error] = std::from_chars(hex.data(), hex.data() + hex.size(), value, 16);
        if (hex.size() != 2 || error != std::errc() || end != hex.data() + 2) {
          fail_at(escape_start, "expected two hex digits after \\x");
        }
        text += static_cast<char>(value);
        pos_ += 2;
      } else {
        fail_at(escape_start, "unknown escape in string (expected \\\", \\\\, \\n, \\t or \\xHH)");
      }
    }
    return text;
  }

 private:
  std::string_view line_;
  std::size_t pos_ = 0;
  std::uint32_t line_number_;
  const std::string& file_;
};

std::string field_what(std::string_view field) {
  return fmt::format("field '{}'", field);
}

void parse_dims(LineParser& p, std::uint8_t& num_dims, std::array<Dim, kMaxFreeDims>& dims,
                std::string_view field) {
  p.expect('[', fmt::format("expected '[' to start the [[step,count],...] pattern of {}",
                            field_what(field)));
  num_dims = 0;
  dims = {};
  if (p.consume(']')) return;
  while (true) {
    if (num_dims == kMaxFreeDims) {
      p.fail(fmt::format("at most {} free dimensions in {}", kMaxFreeDims, field_what(field)));
    }
    p.expect('[', "expected '[' to start a [step,count] dimension");
    Dim& dim = dims[num_dims];
    dim.step = p.integer<std::int64_t>("a dimension step");
    p.expect(',', "expected ',' between step and count of a dimension");
    dim.count = p.integer<std::uint32_t>("a dimension count");
    p.expect(']', "expected ']' after the count of a dimension");
    ++num_dims;
    if (p.consume(']')) return;
    p.expect(',', "expected ',' or ']' after dimension");
  }
}

void parse_value(LineParser& p, AccessPattern& ap, std::string_view field) {
  const std::size_t start = p.position();
  const std::string_view memory_word = p.identifier();
  const auto memory = memory_from_name(memory_word);
  if (!memory) {
    p.fail_at(start, fmt::format("expected an access pattern (sbuf[...], psum[...] or hbm[...]) "
                                 "for {}, got {}",
                                 field_what(field),
                                 memory_word.empty() ? "nothing" : quoted_word(memory_word)));
  }
  ap = AccessPattern{};
  ap.memory = *memory;
  p.raw_expect('[', fmt::format("expected '[' right after '{}'", memory_word));
  p.skip_space();
  p.raw_expect('p', "expected the partition range 'p<start>:<end>'");
  // Decimal only: an 'x' after the end introduces the partition step.
  const std::size_t range_start = p.position();
  ap.start_partition = p.integer<std::uint32_t>("the start partition", /*decimal_only=*/true);
  p.raw_expect(':', "expected ':' between start and end partition");
  const auto end = p.integer<std::uint64_t>("the end partition", /*decimal_only=*/true);
  if (end < ap.start_partition) {
    p.fail_at(range_start, fmt::format("partition range end {} is before its start {}", end,
                                       ap.start_partition));
  }
  if (end - ap.start_partition > std::numeric_limits<std::uint32_t>::max()) {
    p.fail_at(range_start, "partition count does not fit 32 bits");
  }
  ap.partitions = static_cast<std::uint32_t>(end - ap.start_partition);
  if (p.raw_peek() == 'x') {
    p.raw_expect('x', "");
    ap.partition_step = p.integer<std::int64_t>("the partition step", /*decimal_only=*/true);
  }
  p.expect(',', "expected ',' after the partition range");
  const std::string_view offset_key = ap.memory == Memory::kHbm ? "addr" : "off";
  p.skip_space();
  const std::size_t key_start = p.position();
  if (p.identifier() != offset_key || !p.consume('=')) {
    p.fail_at(key_start, ap.memory == Memory::kHbm
                             ? "expected 'addr=' (HBM byte address)"
                             : "expected 'off=' (byte offset within each partition)");
  }
  ap.offset = p.integer<std::uint64_t>(ap.memory == Memory::kHbm ? "an address" : "an offset");
  p.expect(',', "expected ',' after the offset");
  p.skip_space();
  const std::size_t dtype_start = p.position();
  const std::string_view dtype_word = p.identifier();
  const auto dtype = numerics::parse_dtype(dtype_word);
  if (!dtype) {
    p.fail_at(dtype_start, fmt::format("unknown dtype {}{}",
                                       dtype_word.empty() ? "(none)" : quoted_word(dtype_word),
                                       did_you_mean(dtype_word, dtype_names())));
  }
  ap.dtype = *dtype;
  p.expect(',', "expected ',' after the dtype");
  parse_dims(p, ap.num_dims, ap.dims, field);
  p.expect(']', "expected ']' to close the access pattern");
}

void parse_value(LineParser& p, std::optional<AccessPattern>& ap, std::string_view field) {
  if (p.peek_identifier() == "none") {
    p.identifier();
    ap.reset();
    return;
  }
  parse_value(p, ap.emplace(), field);
}

void parse_value(LineParser& p, float& value, std::string_view field) {
  value = p.floating(field_what(field));
}

void parse_value(LineParser& p, ScalarOperand& operand, std::string_view field) {
  if (memory_from_name(p.peek_identifier())) {
    parse_value(p, operand.emplace<AccessPattern>(), field);
  } else {
    parse_value(p, operand.emplace<float>(), field);
  }
}

void parse_value(LineParser& p, bool& value, std::string_view field) {
  const std::size_t start = p.position();
  const std::string_view word = p.identifier();
  if (word != "true" && word != "false") {
    p.fail_at(start, fmt::format("expected true or false for {}", field_what(field)));
  }
  value = word == "true";
}

template <class T>
requires std::is_integral_v<T>
void parse_value(LineParser& p, T& value, std::string_view field) {
  value = p.integer<T>(field_what(field));
}

template <class E>
requires std::is_enum_v<E>
void parse_value(LineParser& p, E& value, std::string_view field) {
  p.skip_space();
  const std::size_t start = p.position();
  const std::string_view word = p.identifier();
  for (int i = 0; i < EnumSpelling<E>::kCount; ++i) {
    if (EnumSpelling<E>::name(static_cast<E>(i)) == word) {
      value = static_cast<E>(i);
      return;
    }
  }
  p.fail_at(start, fmt::format("unknown {} {} for {}{}", EnumSpelling<E>::kWhat,
                               word.empty() ? "(none)" : quoted_word(word), field_what(field),
                               did_you_mean(word, enum_spellings<E>())));
}

void parse_value(LineParser& p, AffinePattern& pattern, std::string_view field) {
  parse_dims(p, pattern.num_dims, pattern.dims, field);
}

// '[' item (',' item)* ']' or '[]', at most kMaxListEntries items.
template <class ParseItem>
void parse_list(LineParser& p, std::string_view field, ParseItem&& parse_item) {
  p.expect('[', fmt::format("expected '[' to start the list of {}", field_what(field)));
  if (p.consume(']')) return;
  for (std::size_t count = 1;; ++count) {
    if (count > kMaxListEntries) {
      p.fail(fmt::format("more than {} entries in {}", kMaxListEntries, field_what(field)));
    }
    parse_item();
    if (p.consume(']')) return;
    p.expect(',', fmt::format("expected ',' or ']' in the list of {}", field_what(field)));
  }
}

void parse_value(LineParser& p, std::array<std::uint8_t, 32>& mask, std::string_view field) {
  std::size_t count = 0;
  const std::size_t start = p.position();
  parse_list(p, field, [&] {
    if (count == mask.size()) p.fail(fmt::format("{} takes exactly 32 entries", field_what(field)));
    mask[count++] = p.integer<std::uint8_t>(fmt::format("an entry of {}", field_what(field)));
  });
  if (count != mask.size()) {
    p.fail_at(start, fmt::format("{} takes exactly 32 entries, got {}", field_what(field), count));
  }
}

void parse_value(LineParser& p, std::vector<AccessPattern>& aps, std::string_view field) {
  aps.clear();
  parse_list(p, field, [&] { parse_value(p, aps.emplace_back(), field); });
}

void parse_value(LineParser& p, std::vector<float>& values, std::string_view field) {
  values.clear();
  parse_list(p, field, [&] { values.push_back(p.floating(field_what(field))); });
}

void parse_value(LineParser& p, std::string& text, std::string_view field) {
  text = p.string_literal(field_what(field));
}

// Parses "name=value, ..." into op; returns which fields were given (in fields() order).
template <class Op>
std::vector<bool> parse_fields(LineParser& p, Op& op) {
  std::vector<std::string_view> names;
  op.fields([&](std::string_view name, auto&, Role) { names.push_back(name); });
  std::vector<bool> seen(names.size(), false);

  const auto is_clause = [](std::string_view word) {
    return std::find(kClauseKeywords.begin(), kClauseKeywords.end(), word) != kClauseKeywords.end();
  };
  const std::string_view first = p.peek_identifier();
  if (!first.empty() && !is_clause(first)) {
    do {
      p.skip_space();
      const std::size_t key_start = p.position();
      const std::string_view key = p.identifier();
      if (key.empty()) p.fail("expected a field name");
      const auto it = std::find(names.begin(), names.end(), key);
      if (it == names.end()) {
        p.fail_at(key_start, fmt::format("unknown field {} for {}{}", quoted_word(key), Op::kName,
                                         did_you_mean(key, names)));
      }
      const auto index = static_cast<std::size_t>(it - names.begin());
      if (seen[index]) p.fail_at(key_start, fmt::format("duplicate field '{}'", key));
      seen[index] = true;
      p.expect('=', fmt::format("expected '=' after field name '{}'", key));
      std::size_t visiting = 0;
      op.fields([&](std::string_view name, auto& member, Role) {
        if (visiting++ == index) parse_value(p, member, name);
      });
    } while (p.consume(','));
  }
  return seen;
}

// Operand access patterns are always printed, so they are required: a forgotten operand
// must not silently become the default pattern.
template <class Op>
void check_required_fields(LineParser& p, Op& op, const std::vector<bool>& seen,
                           std::size_t mnemonic_position) {
  std::size_t visiting = 0;
  op.fields([&](std::string_view name, auto& member, Role) {
    if constexpr (kAlwaysPrinted<std::decay_t<decltype(member)>>) {
      if (!seen[visiting]) {
        p.fail_at(mnemonic_position, fmt::format("missing operand '{}' of {}", name, Op::kName));
      }
    }
    ++visiting;
  });
}

void parse_origin(LineParser& p, Origin& origin) {
  p.skip_space();
  if (p.consume('?')) {
    origin = Origin{};
    return;
  }
  if (p.raw_peek() == '"') {
    origin.file = p.string_literal("the origin file");
  } else {
    const std::size_t start = p.position();
    origin.file.clear();
    while (is_bare_file_char(p.raw_peek())) {
      if (origin.file.size() >= kMaxStringBytes) p.fail_at(start, "origin file name too long");
      origin.file += p.raw_peek();
      p.raw_expect(p.raw_peek(), "");
    }
    if (origin.file.empty()) p.fail_at(start, "expected an origin file:line:col or '?' after '@'");
  }
  p.raw_expect(':', "expected ':' after the origin file");
  origin.line = p.integer<std::uint32_t>("the origin line", /*decimal_only=*/true);
  p.raw_expect(':', "expected ':' after the origin line");
  origin.column = p.integer<std::uint32_t>("the origin column", /*decimal_only=*/true);
}

// After the fields: wait, signal, rounding and name clauses in any order (each once), then
// an optional origin, then the end of the line.
void parse_clauses(LineParser& p, Instruction& inst, bool& origin_given) {
  bool seen_wait = false, seen_signal = false, seen_rounding = false, seen_name = false;
  while (!p.at_end()) {
    if (p.consume('@')) {
      parse_origin(p, inst.origin);
      origin_given = true;
      if (!p.at_end()) p.fail("expected the end of the line after the origin");
      return;
    }
    const std::size_t start = p.position();
    const std::string_view word = p.identifier();
    auto once = [&](bool& seen) {
      if (seen) p.fail_at(start, fmt::format("duplicate '{}' clause", word));
      seen = true;
    };
    if (word == "wait" || word == "signal") {
      const bool is_wait = word == "wait";
      once(is_wait ? seen_wait : seen_signal);
      do {
        if ((is_wait ? inst.waits.size() : inst.signals.size()) >= kMaxSemaphoreClauses) {
          p.fail(fmt::format("more than {} semaphores in one '{}' clause", kMaxSemaphoreClauses,
                             word));
        }
        p.expect('s', is_wait ? "expected a semaphore wait 's<id> >= <value>'"
                              : "expected a semaphore signal 's<id> += <increment>'");
        const auto sem = p.integer<std::uint16_t>("a semaphore id");
        if (is_wait) {
          if (!p.consume(">=")) p.fail("expected '>=' after the semaphore id");
          inst.waits.push_back({sem, p.integer<std::uint32_t>("a wait value")});
        } else {
          if (!p.consume("+=")) p.fail("expected '+=' after the semaphore id");
          inst.signals.push_back({sem, p.integer<std::uint32_t>("a signal increment")});
        }
      } while (p.consume(','));
    } else if (word == "rounding") {
      once(seen_rounding);
      p.expect('=', "expected '=' after 'rounding'");
      parse_value(p, inst.rounding, "rounding");
    } else if (word == "name") {
      once(seen_name);
      p.expect('=', "expected '=' after 'name'");
      inst.name = p.string_literal("the instruction name");
    } else {
      p.fail_at(start, word.empty()
                           ? std::string("expected ',' and a field, a clause (wait, signal, "
                                         "rounding, name), '@' origin or the end of the line")
                           : fmt::format("unexpected {}: expected ',' before a field, or a clause "
                                         "(wait, signal, rounding, name)",
                                         quoted_word(word)));
    }
  }
}

Engine default_engine(const Operation& op) {
  const unsigned engines = op_engines(op);
  return static_cast<Engine>(engines == 0 ? 0 : std::countr_zero(engines));
}

struct ParseState {
  Program program;
  bool seed_given = false;
};

void parse_line(LineParser& p, ParseState& state) {
  if (p.at_end()) return;  // blank or comment-only
  if (p.peek() == '.') {
    const std::size_t start = p.position();
    p.consume('.');
    const std::string_view directive = p.identifier();
    if (directive != "seed") {
      p.fail_at(start,
                fmt::format("unknown directive '.{}' (expected '.seed')", directive.substr(0, 40)));
    }
    if (state.seed_given) p.fail_at(start, "duplicate .seed directive");
    state.seed_given = true;
    state.program.seed = p.integer<std::uint32_t>("the seed");
    if (!p.at_end()) p.fail("expected the end of the line after .seed N");
    return;
  }
  Instruction inst;
  std::optional<QueueId> queue;
  if (p.consume('[')) {
    const std::size_t start = p.position();
    const std::string_view word = p.identifier();
    const auto engine = engine_from_name(word);
    if (!engine) {
      p.fail_at(start,
                fmt::format("unknown engine {}{}", word.empty() ? "(none)" : quoted_word(word),
                            did_you_mean(word, engine_names())));
    }
    queue = QueueId{*engine, 0};
    if (p.consume('.')) queue->index = p.integer<std::uint8_t>("the queue index");
    p.expect(']', "expected ']' after the queue (e.g. [vector] or [dma.3])");
  }
  p.skip_space();
  const std::size_t mnemonic_position = p.position();
  const std::string_view mnemonic = p.identifier();
  if (mnemonic.empty()) p.fail("expected a mnemonic");
  auto op = make_operation(mnemonic);
  if (!op) {
    p.fail_at(mnemonic_position, fmt::format("unknown mnemonic {}{}", quoted_word(mnemonic),
                                             did_you_mean(mnemonic, mnemonics())));
  }
  inst.op = std::move(*op);
  inst.queue = queue ? *queue : QueueId{default_engine(inst.op), 0};
  const std::vector<bool> seen =
      std::visit([&](auto& alternative) { return parse_fields(p, alternative); }, inst.op);
  bool origin_given = false;
  parse_clauses(p, inst, origin_given);
  std::visit(
      [&](auto& alternative) { check_required_fields(p, alternative, seen, mnemonic_position); },
      inst.op);
  if (!origin_given) {
    inst.origin = Origin{p.file(), p.line_number(), p.column_of(mnemonic_position)};
  }
  state.program.instructions.push_back(std::move(inst));
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
  print_list("wait", inst.waits,
             [&](const SemWait& w) { out += fmt::format("s{}>={}", w.sem, w.value); });
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

std::string print_program(const Program& program) {
  std::string out;
  if (program.seed != 0) out += fmt::format(".seed {}\n", program.seed);
  for (const Instruction& inst : program.instructions) {
    out += print_instruction(inst);
    out += '\n';
  }
  return out;
}

Program parse_program(std::string_view text, const std::string& file) {
  ParseState state;
  std::uint32_t line_number = 0;
  std::size_t line_start = 0;
  while (line_start <= text.size()) {
    std::size_t line_end = text.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = text.size();
    std::string_view line = text.substr(line_start, line_end - line_start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line_number == std::numeric_limits<std::uint32_t>::max()) {
      throw AsmError(file, line_number, 1, "too many lines");
    }
    ++line_number;
    if (line.size() > kMaxLineBytes) {
      throw AsmError(file, line_number, 1, fmt::format("line longer than {} bytes", kMaxLineBytes));
    }
    LineParser parser(line, line_number, file);
    parse_line(parser, state);
    line_start = line_end + 1;
  }
  return std::move(state.program);
}

Program parse_program_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw AsmError(path, 0, 0, fmt::format("cannot open file: {}", std::strerror(errno)));
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) throw AsmError(path, 0, 0, "error while reading the file");
  return parse_program(content.str(), path);
}

}  // namespace trnsim::isa
