// Encoding a chip config as JSON (to_json): every field through the schema's visitor, with
// its provenance; the inverse of arch_decode.cpp.
#include <cmath>

#include "arch/arch_detail.h"
#include "arch/schema.h"

namespace trnsim::arch {

using detail::Range;
using namespace config_detail;

namespace {

json& make_path(json& root, const std::string& path) {
  json* node = &root;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    node = &(*node)[path.substr(start, dot == std::string::npos ? dot : dot - start)];
    if (dot == std::string::npos) return *node;
    start = dot + 1;
  }
}

// ---- encoding ---------------------------------------------------------------------------

}  // namespace

namespace config_detail {

json param_json(const Param& p, bool integral) {
  json out = json::object();
  const bool exact_integer = std::isfinite(p.value) && std::floor(p.value) == p.value &&
                             std::fabs(p.value) <= kMaxExactInteger;
  if (integral && exact_integer) {
    out["value"] = static_cast<std::int64_t>(p.value);
  } else {
    out["value"] = p.value;
  }
  if (!p.source.empty()) out["source"] = p.source;
  if (p.estimate) out["estimate"] = true;
  return out;
}

}  // namespace config_detail

namespace {

class Encoder {
 public:
  Encoder(json& root, const ChipConfig& config) : root_(root), config_(config) {}

  void text(const std::string& path, const std::string& s, const char*) {
    make_path(root_, path) = s;
  }
  void generation(const std::string& path, Generation g, const char*) {
    make_path(root_, path) = generation_name(g);
  }
  void count(const std::string& path, int n, const Range&, const char*) {
    with_provenance(path, json(n));
  }
  void count_list(const std::string& path, const std::vector<int>& list, const Range&,
                  const char*) {
    with_provenance(path, json(list));
  }
  void flag(const std::string& path, bool b, const char*) { with_provenance(path, json(b)); }
  void param(const std::string& path, const Param& p, const Range& range, const char*,
             const char*) {
    make_path(root_, path) = param_json(p, range.integral);
  }
  void optional_param(const std::string& path, const std::optional<Param>& p, const Range& range,
                      const char*, const char*) {
    if (p) make_path(root_, path) = param_json(*p, range.integral);
  }
  void figures(const std::string& path, const std::map<std::string, PublishedFigure>& figures,
               const char*) {
    if (figures.empty()) return;
    json& out = make_path(root_, path);
    for (const auto& [mode, figure] : figures) {
      json entry = param_json(figure, false);
      if (figure.tolerance != kDefaultPublishedTolerance) entry["tolerance"] = figure.tolerance;
      if (!figure.discrepancy.empty()) entry["discrepancy"] = figure.discrepancy;
      out[mode] = std::move(entry);
    }
  }

 private:
  void with_provenance(const std::string& path, json value) {
    const auto it = config_.provenance.find(path);
    if (it == config_.provenance.end()) {
      make_path(root_, path) = std::move(value);
      return;
    }
    json out = {{"value", std::move(value)}};
    if (!it->second.source.empty()) out["source"] = it->second.source;
    if (it->second.estimate) out["estimate"] = true;
    make_path(root_, path) = std::move(out);
  }

  json& root_;
  const ChipConfig& config_;
};

}  // namespace

json to_json(const ChipConfig& c) {
  json root = json::object();
  Encoder encoder(root, c);
  detail::visit_fields(c, encoder);
  return root;
}

}  // namespace trnsim::arch
