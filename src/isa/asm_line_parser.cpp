// LineParser: the number, float and string tokens of one line of assembly (the rest of the
// class is inline in asm_line_parser.h).
#include "isa/asm_line_parser.h"

#include <algorithm>
#include <bit>
#include <charconv>

namespace trnsim::isa::asm_detail {

std::string quoted_word(std::string_view word) {
  std::string shown;
  for (char c : word.substr(0, 40)) {
    shown += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  }
  if (word.size() > 40) shown += "...";
  return "'" + shown + "'";
}

std::string_view LineParser::number_token() {
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

float LineParser::floating(std::string_view what) {
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
  const auto [end, error] = std::from_chars(body.data(), body.data() + body.size(), value, format);
  if (error == std::errc::result_out_of_range) {
    fail_at(start,
            fmt::format("number {} is out of the float range for {}", quoted_word(token), what));
  }
  if (error != std::errc() || end != body.data() + body.size()) invalid();
  return negative ? -value : value;
}

std::string LineParser::string_literal(std::string_view what) {
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
    if (byte < 0x20 || byte == 0x7f) fail("control character in string (use an escape like \\x09)");
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

}  // namespace trnsim::isa::asm_detail
