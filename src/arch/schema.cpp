#include "arch/schema.h"

namespace trnsim::arch {
namespace detail {

const char* kind_description(Kind kind) {
  switch (kind) {
    case Kind::kPositiveInteger:
      return "positive integer";
    case Kind::kNonNegativeInteger:
      return "integer >= 0";
    case Kind::kPositive:
      return "number > 0";
    case Kind::kNonNegative:
      return "number >= 0";
    case Kind::kFraction:
      return "fraction in (0, 1]";
  }
  return "number";
}

bool kind_is_integral(Kind kind) {
  return kind == Kind::kPositiveInteger || kind == Kind::kNonNegativeInteger;
}

}  // namespace detail

namespace {

// Lists the schema as FieldInfo rows.
struct Describer {
  std::vector<FieldInfo> rows;

  void add(const std::string& path, const char* kind, const char* unit, const char* meaning) {
    rows.push_back(FieldInfo{path, kind, unit, meaning});
  }
  void text(const std::string& path, const std::string&, const char* meaning) {
    add(path, "string", "", meaning);
  }
  void generation(const std::string& path, Generation, const char* meaning) {
    add(path, "\"gen2\" | \"gen3\" | \"gen4\"", "", meaning);
  }
  void count(const std::string& path, int, const char* meaning) {
    add(path, "positive integer", "", meaning);
  }
  void count_list(const std::string& path, const std::vector<int>&, const char* meaning) {
    add(path, "list of positive integers", "", meaning);
  }
  void flag(const std::string& path, bool, const char* meaning) {
    add(path, "true | false", "", meaning);
  }
  void param(const std::string& path, const Param&, detail::Kind kind, const char* unit,
             const char* meaning) {
    add(path, detail::kind_description(kind), unit, meaning);
  }
  void optional_param(const std::string& path, const std::optional<Param>&, detail::Kind kind,
                      const char* unit, const char* meaning) {
    add(path, detail::kind_description(kind), unit, meaning);
  }
  void figures(const std::string& path, const std::map<std::string, PublishedFigure>&,
               const char* meaning) {
    add(path, "object: mode -> published figure", "TFLOPS", meaning);
  }
};

}  // namespace

std::vector<FieldInfo> describe_fields() {
  Describer describer;
  const ChipConfig scratch;
  detail::visit_fields(scratch, describer);
  return describer.rows;
}

}  // namespace trnsim::arch
