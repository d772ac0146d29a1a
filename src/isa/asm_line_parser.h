// The character-level reader of one line of assembly (LineParser), shared by the parser's
// files (asm_parse.cpp, asm_line_parser.cpp); not part of the public header isa/asm.h.
#pragma once

#include <fmt/format.h>

#include <cctype>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "isa/asm.h"
#include "isa/asm_detail.h"

namespace trnsim::isa::asm_detail {

// Display form of a word in an error message: bounded and without control bytes.
std::string quoted_word(std::string_view word);

// One LineParser per line, character level, with the column of every token.
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
  std::string_view number_token();

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

  float floating(std::string_view what);

  std::string string_literal(std::string_view what);

 private:
  std::string_view line_;
  std::size_t pos_ = 0;
  std::uint32_t line_number_;
  const std::string& file_;
};

}  // namespace trnsim::isa::asm_detail
