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
#include <regex>
#include <set>
#include <sstream>

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

const std::regex kExpectation(
    R"(expected-(error|note)(@([+-]\d+))?(\s+col\s+(\d+))?\s*\{\{(.*?)\}\})");
const std::regex kChip(R"(^\s*#\s*chip:\s*(\S+))");
const std::regex kMnemonic(R"(^\s*(\[[^\]]*\]\s*)?([a-z_0-9]+))");

// The mnemonic of an instruction line, "" for comments and blank lines.
std::string mnemonic_of(const std::string& line) {
  std::smatch m;
  if (line.find_first_not_of(" \t") == std::string::npos) return "";
  if (line.find_first_not_of(" \t") == line.find('#')) return "";
  return std::regex_search(line, m, kMnemonic) ? m[2].str() : "";
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
    std::smatch m;
    if (std::regex_search(line, m, kChip)) s.chip = m[1].str();
    for (auto it = std::sregex_iterator(line.begin(), line.end(), kExpectation);
         it != std::sregex_iterator(); ++it) {
      const std::smatch& e = *it;
      Expectation x;
      x.severity = e[1].str() == "note" ? util::Severity::kNote : util::Severity::kError;
      const int offset = e[3].matched ? std::stoi(e[3].str()) : 0;
      x.line = static_cast<std::uint32_t>(static_cast<int>(number) + offset);
      x.column = e[5].matched ? static_cast<std::uint32_t>(std::stoul(e[5].str())) : 0;
      x.text = e[6].str();
      if (x.severity == util::Severity::kError) {
        const std::size_t target = x.line - 1;
        if (target < lines.size() && !mnemonic_of(lines[target]).empty())
          s.mnemonics_expected.insert(mnemonic_of(lines[target]));
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
  const std::regex kRow(R"(^\| ([a-z_0-9 /]+) \| (.*)\|$)");
  for (std::string row; std::getline(rows, row);) {
    std::smatch m;
    if (!std::regex_match(row, m, kRow) || m[1].str() == "Operation") continue;
    if (m[2].str().find("generic rules only") != std::string::npos) continue;
    std::istringstream names(m[1].str());
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
