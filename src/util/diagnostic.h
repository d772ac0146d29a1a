// One location type and one diagnostic shape for every layer (docs/contributing.md,
// "Diagnostics"):
//
//   kernel.py:40:3: error: instruction 12 (nc_matmul): operand 'moving': free size 1024
//   exceeds the limit 512 of NeuronCore-v3
//   kernel.py:31:5: note: the other instruction: instruction 9 (dma_copy)
//
// A diagnostic is a located message with located notes (the other instruction of a race, the
// instructions blocked in a deadlock); every trnsim exception is a util::Error that carries
// its diagnostics as data and whose what() is their text. Header-only: the bottom of the
// layer stack, usable by every layer.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/enum_names.h"

namespace trnsim::util {

// A place in a source: a kernel's own line (C++ or Python), an assembly file position or a
// config file. line 0 means unknown; column 0 means the whole line.
struct SourceLocation {
  std::string file;
  std::uint32_t line = 0;
  std::uint32_t column = 0;

  bool known() const { return !file.empty() || line != 0; }
  friend bool operator==(const SourceLocation&, const SourceLocation&) = default;
};

// "file:line:col", "file:line" without a column, "file" without a line, "" when unknown.
inline std::string to_string(const SourceLocation& where) {
  if (!where.known()) return "";
  std::string text = where.file.empty() ? "<unknown>" : where.file;
  if (where.line == 0) return text;
  text += ':' + std::to_string(where.line);
  if (where.column != 0) text += ':' + std::to_string(where.column);
  return text;
}

enum class Severity : std::uint8_t { kError, kWarning, kNote };

inline std::string_view severity_name(Severity severity) {
  static constexpr std::array<std::string_view, 3> kNames = {"error", "warning", "note"};
  return enum_name(kNames, severity);
}

struct Note {
  SourceLocation where;
  std::string message;
};

struct Diagnostic {
  SourceLocation where;
  std::string message;  // "what (why)"; the location is not repeated in it
  std::vector<Note> notes;
  Severity severity = Severity::kError;
};

// A diagnostic with no location (built field by field: GCC 12 warns, wrongly, of an
// uninitialised string in the braced form `Diagnostic{{}, message}`).
inline Diagnostic unlocated(std::string message) {
  Diagnostic d;
  d.message = std::move(message);
  return d;
}

// One line `where: severity: message`, or `severity: message` when the location is unknown
// (then `unlocated` stands in for it when given: a command name, a file the caller read).
inline std::string format_line(const SourceLocation& where, Severity severity,
                               std::string_view message, std::string_view unlocated = {}) {
  std::string text = where.known() ? to_string(where) : std::string(unlocated);
  if (!text.empty()) text += ": ";
  text += severity_name(severity);
  text += ": ";
  text += message;
  return text;
}

// The diagnostic and its notes, one line each (no trailing newline).
inline std::string format(const Diagnostic& d, std::string_view unlocated = {}) {
  std::string text = format_line(d.where, d.severity, d.message, unlocated);
  for (const Note& note : d.notes)
    text += '\n' + format_line(note.where, Severity::kNote, note.message, unlocated);
  return text;
}

inline std::string format(const std::vector<Diagnostic>& diagnostics,
                          std::string_view unlocated = {}) {
  std::string text;
  for (const Diagnostic& d : diagnostics) {
    if (!text.empty()) text += '\n';
    text += format(d, unlocated);
  }
  return text;
}

// The base of trnsim's exceptions (arch::ConfigError, isa::AsmError, isa::ValidationError,
// kernel::KernelError, sim::SimError): what() is format(diagnostics()).
class Error : public std::runtime_error {
 public:
  explicit Error(Diagnostic diagnostic) : Error(one(std::move(diagnostic))) {}
  explicit Error(std::vector<Diagnostic> diagnostics)
      : std::runtime_error(format(diagnostics)), diagnostics_(std::move(diagnostics)) {}

  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  // The text with `unlocated` standing in for an unknown location, e.g. "trnsim run".
  std::string format_for(std::string_view unlocated) const {
    return format(diagnostics_, unlocated);
  }

 private:
  // Not a braced list: GCC 12 warns (-Wmaybe-uninitialized) about the initializer_list copy.
  static std::vector<Diagnostic> one(Diagnostic diagnostic) {
    std::vector<Diagnostic> list;
    list.push_back(std::move(diagnostic));
    return list;
  }

  std::vector<Diagnostic> diagnostics_;
};

// `e` with "context: " before its message (the first diagnostic's, keeping its location and
// notes), e.g. which of two compared runs failed.
inline Error with_context(const std::exception& e, std::string_view context) {
  std::vector<Diagnostic> diagnostics;
  if (const auto* error = dynamic_cast<const Error*>(&e)) {
    diagnostics = error->diagnostics();
  } else {
    diagnostics.push_back(unlocated(e.what()));
  }
  if (diagnostics.empty()) diagnostics.emplace_back();
  diagnostics.front().message = std::string(context) + ": " + diagnostics.front().message;
  return Error(std::move(diagnostics));
}

// How a caller that prints errors shows any exception: a util::Error in its own shape, any
// other as `unlocated: error: what()`.
inline std::string format_exception(const std::exception& e, std::string_view unlocated) {
  if (const auto* error = dynamic_cast<const Error*>(&e)) return error->format_for(unlocated);
  return format_line({}, Severity::kError, e.what(), unlocated);
}

}  // namespace trnsim::util
