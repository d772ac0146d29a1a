// The assembly error and validation-rule tests, as text: every file in
// src/isa/tests/diagnostics/ is assembly with the diagnostics it must produce written beside
// the offending lines, in the manner of MLIR's verifier tests:
//
//   # chip: trn2                       the chip preset the section is validated for
//   [vector] tensor_copy dst=..., src=...   # expected-error {{operand 'dst': 129 partitions}}
//   # expected-error@+1 col 12 {{unknown mnemonic}}
//   nc_matmu dst=...
//   # -----                            a new section, parsed and validated on its own
//
// `expected-error` / `expected-note` take an optional line offset (@+N, @-N; the comment's own
// line otherwise), an optional column (col N) and a text the message must contain. A section
// is parsed (an AsmError is its diagnostic) and, if it parses, validated; every diagnostic it
// produces must be expected and every expectation met. Line numbers are the file's own.
// The last test checks that every operation in docs/isa.md's rule table has an invalid case.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>

#include "arch/arch.h"
#include "isa/asm.h"
#include "isa/validate.h"

namespace trnsim::isa {
namespace {

namespace fs = std::filesystem;

std::string source_dir() {
  const char* dir = std::getenv("TRNSIM_SOURCE_DIR");
  return dir != nullptr ? dir : TRNSIM_TEST_SOURCE_DIR;
}

fs::path diagnostics_dir() {
  return fs::path(source_dir()) / "src" / "isa" / "tests" / "diagnostics";
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

struct Expectation {
  util::Severity severity = util::Severity::kError;
  std::uint32_t line = 0;
  std::uint32_t column = 0;  // 0: any
  std::string text;
  bool met = false;
};

// One section: its lines keep their file line numbers (1-based, `first_line` is the first).
struct Section {
  std::uint32_t first_line = 1;
  std::vector<std::string> lines;
  std::string chip;
  std::vector<Expectation> expected;
  std::set<std::string> mnemonics_expected;  // mnemonics of lines that expect an error
};

// A small cursor over one line. (No std::regex: GCC 12 warns inside <regex> in the
// sanitizer build, and these patterns are simple.)
class Cursor {
 public:
  explicit Cursor(std::string_view text, std::size_t at = 0) : text_(text), at_(at) {}
  void skip_spaces() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t')) ++at_;
  }
  bool take(std::string_view word) {
    if (text_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }
  // A run of characters `keep` accepts (possibly empty).
  template <class Keep>
  std::string_view run(Keep keep) {
    const std::size_t start = at_;
    while (at_ < text_.size() && keep(text_[at_])) ++at_;
    return text_.substr(start, at_ - start);
  }
  std::size_t at() const { return at_; }

 private:
  std::string_view text_;
  std::size_t at_;
};

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || is_digit(c) || c == '_';
}

// `expected-(error|note)[@(+|-)N][ col N] {{text}}` starting at `at` (just after
// "expected-"); nullopt when the rest does not have that shape.
std::optional<Expectation> parse_expectation(std::string_view line, std::size_t at,
                                             std::uint32_t line_number) {
  Cursor c(line, at);
  Expectation x;
  if (c.take("note")) {
    x.severity = util::Severity::kNote;
  } else if (!c.take("error")) {
    return std::nullopt;
  }
  int offset = 0;
  if (c.take("@")) {
    const bool minus = c.take("-");
    if (!minus && !c.take("+")) return std::nullopt;
    const std::string_view digits = c.run(is_digit);
    if (digits.empty()) return std::nullopt;
    offset = std::stoi(std::string(digits)) * (minus ? -1 : 1);
  }
  c.skip_spaces();
  if (c.take("col")) {
    c.skip_spaces();
    const std::string_view digits = c.run(is_digit);
    if (digits.empty()) return std::nullopt;
    x.column = static_cast<std::uint32_t>(std::stoul(std::string(digits)));
    c.skip_spaces();
  }
  if (!c.take("{{")) return std::nullopt;
  const std::size_t close = line.find("}}", c.at());
  if (close == std::string_view::npos) return std::nullopt;
  x.text = std::string(line.substr(c.at(), close - c.at()));
  x.line = static_cast<std::uint32_t>(static_cast<int>(line_number) + offset);
  return x;
}

// The preset named by a `# chip: NAME` comment line, or "".
std::string chip_of(std::string_view line) {
  Cursor c(line);
  c.skip_spaces();
  if (!c.take("#")) return "";
  c.skip_spaces();
  if (!c.take("chip:")) return "";
  c.skip_spaces();
  return std::string(c.run([](char ch) { return ch != ' ' && ch != '\t'; }));
}

// The mnemonic of an instruction line ("[queue] mnemonic ..."), "" for comments and blank
// lines.
std::string mnemonic_of(std::string_view line) {
  Cursor c(line);
  c.skip_spaces();
  if (c.take("[")) {
    c.run([](char ch) { return ch != ']'; });
    if (!c.take("]")) return "";
    c.skip_spaces();
  }
  return std::string(c.run(is_name_char));
}

std::vector<Section> split_sections(const std::string& text, const std::string& default_chip) {
  std::vector<Section> sections(1);
  const std::vector<std::string> lines = split_lines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const auto number = static_cast<std::uint32_t>(i + 1);
    if (line.rfind("# -----", 0) == 0) {
      sections.emplace_back();
      sections.back().first_line = number + 1;
      continue;
    }
    Section& s = sections.back();
    s.lines.push_back(line);
    if (const std::string chip = chip_of(line); !chip.empty()) s.chip = chip;
    constexpr std::string_view kMarker = "expected-";
    for (std::size_t at = line.find(kMarker); at != std::string::npos;
         at = line.find(kMarker, at + 1)) {
      std::optional<Expectation> parsed = parse_expectation(line, at + kMarker.size(), number);
      EXPECT_TRUE(parsed.has_value()) << "line " << number << ": malformed expectation: " << line;
      if (!parsed) continue;
      Expectation x = std::move(*parsed);
      if (x.severity == util::Severity::kError) {
        const std::size_t target = x.line - 1;
        const std::string mnemonic = target < lines.size() ? mnemonic_of(lines[target]) : "";
        if (!mnemonic.empty()) s.mnemonics_expected.insert(mnemonic);
      }
      s.expected.push_back(std::move(x));
    }
  }
  // A chip named before the first separator is the file's default.
  const std::string file_chip =
      sections.front().chip.empty() ? default_chip : sections.front().chip;
  for (Section& s : sections)
    if (s.chip.empty()) s.chip = file_chip;
  return sections;
}

// What a section produces: a parse error, or the validation errors of what parsed.
std::vector<util::Diagnostic> diagnose(const Section& s, const std::string& file) {
  std::string text(s.first_line - 1, '\n');  // keep the file's line numbers
  for (const std::string& line : s.lines) text += line + "\n";
  try {
    const Program program = parse_program(text, file);
    validate_program(program, arch::load_preset(s.chip));
  } catch (const util::Error& e) {
    return e.diagnostics();
  }
  return {};
}

// Marks the expectation `d` meets; false when none does.
bool meet(std::vector<Expectation>& expected, util::Severity severity,
          const util::SourceLocation& where, const std::string& message) {
  for (Expectation& x : expected) {
    if (x.met || x.severity != severity || x.line != where.line) continue;
    if (x.column != 0 && x.column != where.column) continue;
    if (message.find(x.text) == std::string::npos) continue;
    x.met = true;
    return true;
  }
  return false;
}

std::vector<fs::path> test_files() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(diagnostics_dir()))
    if (entry.path().extension() == ".asm") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

class DiagnosticsFile : public ::testing::TestWithParam<fs::path> {};

TEST_P(DiagnosticsFile, ProducesExactlyTheExpectedDiagnostics) {
  const fs::path& path = GetParam();
  const std::string file = path.filename().string();
  std::size_t expectations = 0;
  for (Section& s : split_sections(read_text(path), "trn2")) {
    expectations += s.expected.size();
    for (const util::Diagnostic& d : diagnose(s, file)) {
      EXPECT_EQ(d.where.file, file) << util::format(d);
      EXPECT_TRUE(meet(s.expected, d.severity, d.where, d.message))
          << file << " (chip " << s.chip << "): unexpected diagnostic:\n"
          << util::format(d);
      for (const util::Note& n : d.notes)
        EXPECT_TRUE(meet(s.expected, util::Severity::kNote, n.where, n.message))
            << file << ": unexpected note:\n"
            << util::format_line(n.where, util::Severity::kNote, n.message);
    }
    for (const Expectation& x : s.expected)
      EXPECT_TRUE(x.met) << file << ":" << x.line << ": expected "
                         << util::severity_name(x.severity) << " {{" << x.text
                         << "}} was not produced (chip " << s.chip << ")";
  }
  EXPECT_GT(expectations, 0u) << file << " expects nothing";
}

INSTANTIATE_TEST_SUITE_P(Files, DiagnosticsFile, ::testing::ValuesIn(test_files()),
                         [](const ::testing::TestParamInfo<fs::path>& param_info) {
                           std::string name = param_info.param.stem().string();
                           std::replace_if(
                               name.begin(), name.end(),
                               [](char c) {
                                 return std::isalnum(static_cast<unsigned char>(c)) == 0;
                               },
                               '_');
                           return name;
                         });

// The operations of docs/isa.md's "Per operation" table: "| nc_matmul | rules |" rows.
std::vector<std::string> documented_operations() {
  const std::string doc = read_text(fs::path(source_dir()) / "docs" / "isa.md");
  const auto begin = doc.find("### Per operation");
  const auto end = doc.find("\n### ", begin + 1);
  std::vector<std::string> ops;
  std::istringstream rows(doc.substr(begin, end - begin));
  for (std::string row; std::getline(rows, row);) {
    // "| name[ / name] | rules |"
    if (row.rfind("| ", 0) != 0) continue;
    const std::size_t bar = row.find(" | ", 2);
    if (bar == std::string::npos) continue;
    const std::string first = row.substr(2, bar - 2);
    const bool op_names = !first.empty() && std::all_of(first.begin(), first.end(), [](char ch) {
      return is_name_char(ch) || ch == ' ' || ch == '/';
    });
    if (!op_names || first == "Operation") continue;
    if (row.find("generic rules only", bar) != std::string::npos) continue;
    std::istringstream names(first);
    for (std::string name; std::getline(names, name, '/');) {
      name.erase(0, name.find_first_not_of(' '));
      name.erase(name.find_last_not_of(' ') + 1);
      ops.push_back(name);
    }
  }
  return ops;
}

TEST(DiagnosticsFiles, EveryDocumentedOperationHasAnInvalidCase) {
  std::set<std::string> covered;
  for (const fs::path& path : test_files()) {
    if (path.stem().string().rfind("validate", 0) != 0) continue;  // parse errors do not count
    for (const Section& s : split_sections(read_text(path), "trn2"))
      covered.insert(s.mnemonics_expected.begin(), s.mnemonics_expected.end());
  }
  const std::vector<std::string> ops = documented_operations();
  EXPECT_GT(ops.size(), 30u) << "the rule table of docs/isa.md was not found";
  for (const std::string& op : ops)
    EXPECT_TRUE(covered.count(op)) << "docs/isa.md lists rules for " << op
                                   << " but no file in src/isa/tests/diagnostics/ expects an "
                                      "error from it";
}

}  // namespace
}  // namespace trnsim::isa
