// A traced event-model run as a Chrome/Perfetto trace: ranks by chip, channels as tracks,
// utilisation counters (docs/collectives.md, "Seeing a run").
#include <fmt/core.h>

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "collective/collective.h"

namespace trnsim::collective {

namespace {

std::string quoted(const std::string& text) {
  return nlohmann::json(text).dump();
}

// Each channel's busy fraction in `buckets` equal windows of [0, total).
std::vector<std::vector<double>> utilisation(const Simulation& s, int buckets) {
  std::vector<std::vector<double>> u(s.channels.size(),
                                     std::vector<double>(static_cast<std::size_t>(buckets)));
  const double width = s.time_ns / buckets;
  for (const BusySpan& span : s.busy) {
    auto& row = u[static_cast<std::size_t>(span.channel)];
    const int first = std::clamp(static_cast<int>(span.start_ns / width), 0, buckets - 1);
    const int last = std::clamp(static_cast<int>(span.end_ns / width), 0, buckets - 1);
    for (int b = first; b <= last; ++b) {
      const double overlap =
          std::min(span.end_ns, (b + 1) * width) - std::max(span.start_ns, b * width);
      if (overlap > 0) row[static_cast<std::size_t>(b)] += overlap / width;
    }
  }
  return u;
}

}  // namespace

void write_chrome_trace(const Simulation& s, std::ostream& out, int buckets) {
  buckets = std::max(1, buckets);
  std::string b;
  const auto o = std::back_inserter(b);
  const auto us = [](double ns) { return ns * 1e-3; };
  fmt::format_to(o,
                 "{{\"displayTimeUnit\":\"ns\",\"otherData\":{{\"generator\":\"trnsim ccom\","
                 "\"op\":{},\"system\":{},\"algorithm\":\"{}\",\"ranks\":{}}},\"traceEvents\":[\n",
                 quoted(s.op_name), quoted(s.system_name), name(s.algorithm), s.ranks);
  bool first = true;
  const auto begin = [&] {
    if (!first) b += ",\n";
    first = false;
  };
  const auto metadata = [&](int pid, int tid, const char* what, const std::string& args) {
    begin();
    fmt::format_to(o, "{{\"ph\":\"M\",\"name\":\"{}\",\"pid\":{},\"tid\":{},\"args\":{{{}}}}}",
                   what, pid, tid, args);
  };
  const auto named = [](const std::string& text) { return "\"name\":" + quoted(text); };
  // A process per chip holding ranks (pid k + 1 for the k-th, in ring order), a track per
  // rank (tid rank + 1); then the channels.
  const int slots = static_cast<int>(s.chip_names.size());
  for (int k = 0; k < slots; ++k) {
    metadata(k + 1, 0, "process_name", named(s.chip_names[static_cast<std::size_t>(k)]));
    metadata(k + 1, 0, "process_sort_index", fmt::format("\"sort_index\":{}", k + 1));
    for (int r = k * s.ranks_per_chip; r < std::min(s.ranks, (k + 1) * s.ranks_per_chip); ++r)
      metadata(k + 1, r + 1, "thread_name", named(fmt::format("rank {}", r)));
  }
  const int links_pid = slots + 1;
  metadata(links_pid, 0, "process_name", named("links"));
  metadata(links_pid, 0, "process_sort_index", fmt::format("\"sort_index\":{}", links_pid));
  for (std::size_t c = 0; c < s.channels.size(); ++c)
    metadata(links_pid, static_cast<int>(c) + 1, "thread_name", named(s.channels[c].name));

  for (const RankStep& rs : s.rank_steps) {
    const int pid = rs.rank / s.ranks_per_chip + 1;
    begin();
    fmt::format_to(o,
                   "{{\"ph\":\"X\",\"name\":\"{} step {}\",\"cat\":\"{}\",\"pid\":{},\"tid\":{},"
                   "\"ts\":{:.4f},\"dur\":{:.4f}}}",
                   name(s.algorithm), rs.step, s.op_name, pid, rs.rank + 1, us(rs.start_ns),
                   us(rs.sent_ns - rs.start_ns));
    if (rs.waited_on >= 0 && rs.end_ns > rs.sent_ns) {
      begin();
      fmt::format_to(o,
                     "{{\"ph\":\"X\",\"name\":\"wait for rank {}\",\"cat\":\"wait\",\"pid\":{},"
                     "\"tid\":{},\"ts\":{:.4f},\"dur\":{:.4f},\"args\":{{\"step\":{}}}}}",
                     rs.waited_on, pid, rs.rank + 1, us(rs.sent_ns), us(rs.end_ns - rs.sent_ns),
                     rs.step);
    }
  }
  for (const BusySpan& span : s.busy) {
    begin();
    fmt::format_to(o,
                   "{{\"ph\":\"X\",\"name\":\"busy\",\"cat\":\"link\",\"pid\":{},\"tid\":{},"
                   "\"ts\":{:.4f},\"dur\":{:.4f}}}",
                   links_pid, span.channel + 1, us(span.start_ns), us(span.end_ns - span.start_ns));
  }
  if (s.time_ns > 0) {
    const std::vector<std::vector<double>> u = utilisation(s, buckets);
    for (std::size_t c = 0; c < u.size(); ++c)
      for (int k = 0; k < buckets; ++k) {
        begin();
        fmt::format_to(o,
                       "{{\"ph\":\"C\",\"name\":{},\"pid\":{},\"ts\":{:.4f},\"args\":{{"
                       "\"utilisation\":{:.4f}}}}}",
                       quoted("utilisation " + s.channels[c].name), links_pid,
                       us(k * s.time_ns / buckets), u[c][static_cast<std::size_t>(k)]);
      }
  }
  b += "\n]}\n";
  out << b;
}

}  // namespace trnsim::collective
