#include "arch/schema.h"

#include <fmt/core.h>

#include <cmath>

#include "arch/arch_detail.h"

namespace trnsim::arch {
namespace detail {

const char* kind_description(const Range& range) {
  return range.integral ? "integer" : "number";
}

namespace {

// A bound as the docs write it: 1e6 and 1e9 as such, other numbers in full.
std::string format_bound(double v) {
  if (v == 1e6) return "1e6";
  if (v == 1e9) return "1e9";
  return config_detail::format_number(v);
}

// "1..1024", or the one value.
std::string span(const Range& range) {
  if (range.min == range.max) return format_bound(range.min);
  return format_bound(range.min) + ".." + format_bound(range.max);
}

}  // namespace

std::string range_description(const Range& range) {
  return (range.or_zero ? "0 or " : "") + span(range);
}

void check_range(const std::string& path, double value, const Range& range, const char* unit) {
  const std::string got = config_detail::format_number(value);
  if (!std::isfinite(value)) throw ConfigError(path, "must be a finite number, got " + got);
  if (range.integral && std::floor(value) != value) {
    throw ConfigError(path, "must be an integer, got " + got);
  }
  const bool in_range = (value >= range.min && value <= range.max) || (range.or_zero && value == 0);
  if (in_range) return;
  const std::string why = range.why != nullptr ? fmt::format(" ({})", range.why) : "";
  if (range.min == range.max) {
    throw ConfigError(path, fmt::format("must be {}, got {}{}", span(range), got, why));
  }
  const std::string unit_suffix = unit != nullptr && *unit != '\0' ? std::string(" ") + unit : "";
  throw ConfigError(path, fmt::format("must be {}{}{}{}, got {}{}", range.or_zero ? "0 or " : "",
                                      range.integral ? "an integer in " : "in ", span(range),
                                      unit_suffix, got, why));
}

}  // namespace detail

namespace {

// Lists the schema as FieldInfo rows.
struct Describer {
  std::vector<FieldInfo> rows;

  void add(const std::string& path, std::string kind, std::string range, const char* unit,
           const char* meaning) {
    rows.push_back(FieldInfo{path, std::move(kind), std::move(range), unit, meaning});
  }
  void text(const std::string& path, const std::string&, const char* meaning) {
    add(path, "string", "", "", meaning);
  }
  void generation(const std::string& path, Generation, const char* meaning) {
    add(path, "one of \"gen2\", \"gen3\", \"gen4\"", "", "", meaning);
  }
  void count(const std::string& path, int, const detail::Range& range, const char* meaning) {
    add(path, detail::kind_description(range), detail::range_description(range), "", meaning);
  }
  void count_list(const std::string& path, const std::vector<int>&, const detail::Range& range,
                  const char* meaning) {
    add(path, "list of integers", detail::range_description(range), "", meaning);
  }
  void flag(const std::string& path, bool, const char* meaning) {
    add(path, "true or false", "", "", meaning);
  }
  void param(const std::string& path, const Param&, const detail::Range& range, const char* unit,
             const char* meaning) {
    add(path, detail::kind_description(range), detail::range_description(range), unit, meaning);
  }
  void optional_param(const std::string& path, const std::optional<Param>&,
                      const detail::Range& range, const char* unit, const char* meaning) {
    add(path, detail::kind_description(range), detail::range_description(range), unit, meaning);
  }
  void figures(const std::string& path, const std::map<std::string, PublishedFigure>&,
               const char* meaning) {
    add(path, "object: mode -> published figure",
        detail::range_description(detail::kPublishedTflops), "TFLOPS", meaning);
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
