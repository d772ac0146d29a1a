// Suggestion rules over an analysis: each names the run's numbers and a source line
// (thresholds in docs/profiler.md, "Suggestions").
#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "profile/profile.h"

namespace trnsim::profile {

namespace {

// Thresholds (docs/profiler.md).
constexpr double kDmaWaitPercent = 5.0;    // engine stalled on one DMA queue, % of run
constexpr double kTinyBusyPercent = 20.0;  // MII-bound instructions, % of engine busy
constexpr std::size_t kTinyMinCount = 4;
constexpr double kPartitionBusyPercent = 20.0;  // under-partitioned work, % of engine busy
constexpr double kSmallRunBytes = 512.0;        // contiguous run below this is "small"
constexpr double kSmallDmaBusyPercent = 10.0;   // such transfers, % of DMA busy time
constexpr double kVectorBusyPercent = 30.0;     // VectorE busy, % of run
constexpr double kExpBusyPercent = 30.0;        // exponentials, % of VectorE busy
constexpr double kThrottlePercent = 5.0;        // ramp time, % of TensorE busy

std::string source_of(const Analysis& a, std::uint32_t source) {
  if (source == 0 || source >= a.sources.size()) return "";
  const SourceLine& s = a.sources[source];
  return util::to_string({s.file, s.line, 0});  // source lines are kept without a column
}

bool is_compute(isa::Engine e) {
  return e == isa::Engine::kTensor || e == isa::Engine::kVector || e == isa::Engine::kScalar ||
         e == isa::Engine::kGpSimd;
}

double busy(const InstructionProfile& ip) {
  return std::max(0.0, ip.occupied_until - ip.start);
}

// The instructions `pick` selects: how many, their busy time, and the sum of `value` over them.
struct Tally {
  std::size_t count = 0;
  double ns = 0;
  double sum = 0;
};

template <class Pick, class Value>
Tally tally(const CoreProfile& cp, Pick pick, Value value) {
  Tally t;
  for (const auto& ip : cp.instructions) {
    if (!pick(ip)) continue;
    ++t.count;
    t.ns += busy(ip);
    t.sum += value(ip);
  }
  return t;
}

// The most frequent source among instructions selected by `pick`.
template <class Pick>
std::uint32_t common_source(const CoreProfile& cp, Pick pick) {
  std::map<std::uint32_t, double> time;
  for (const auto& ip : cp.instructions)
    if (pick(ip)) time[ip.source] += std::max(busy(ip), ip.stall_ns) + 1e-9;
  std::uint32_t best = 0;
  double best_t = -1;
  for (const auto& [s, t] : time)
    if (t > best_t) {
      best = s;
      best_t = t;
    }
  return best;
}

// Where a rule looks: the analysis (for source lines and names) and one core's profile.
struct RuleInput {
  const Analysis& a;
  const CoreProfile& cp;
  double total;  // the core's run time, ns (> 0)
};

Suggestion make_suggestion(std::string_view rule, const RuleInput& in, std::string title,
                           std::string detail, std::uint32_t source, double impact_ns) {
  Suggestion s;
  s.rule = std::string(rule);
  s.core = in.cp.core;
  s.title = std::move(title);
  s.detail = std::move(detail);
  s.source = source_of(in.a, source);
  s.impact_ns = impact_ns;
  return s;
}

// 1. A compute engine waiting on a DMA queue.
void dma_wait(const RuleInput& in, std::vector<Suggestion>& out) {
  const CoreProfile& cp = in.cp;
  for (std::size_t t = 0; t < cp.tracks.size(); ++t) {
    const TrackProfile& tp = cp.tracks[t];
    if (!is_compute(tp.queue.engine)) continue;
    // The track's first instruction waits for its first load at pipeline fill whatever the
    // kernel does: no prefetch can hide it, so it is not counted.
    const InstructionProfile* first = nullptr;
    for (const auto& ip : cp.instructions)
      if (ip.track == t && (first == nullptr || ip.start < first->start)) first = &ip;
    std::map<std::uint16_t, std::pair<double, std::size_t>> by_queue;  // releaser track
    for (const auto& ip : cp.instructions)
      if (ip.track == t && ip.cause == StallCause::kDma && &ip != first) {
        by_queue[ip.released_track].first += ip.stall_ns;
        ++by_queue[ip.released_track].second;
      }
    for (const auto& [releaser, v] : by_queue) {
      const std::uint16_t q = releaser;  // a copy: lambdas may not capture bindings (clang 14)
      const double pct = 100.0 * v.first / in.total;
      if (pct < kDmaWaitPercent) continue;
      const std::uint32_t src = common_source(cp, [&](const InstructionProfile& ip) {
        return ip.track == t && ip.cause == StallCause::kDma && ip.released_track == q &&
               &ip != first;
      });
      out.push_back(make_suggestion(
          "dma_wait", in,
          fmt::format("{} engine idle {:.1f}% of the run waiting on DMA queue {}", tp.name, pct,
                      cp.tracks[q].name),
          fmt::format(
              "{} {} instruction(s) waited {:.0f} ns in total for transfers on {} (after the "
              "first, which waits at pipeline fill). Issue those "
              "loads earlier (prefetch the next tile) or give the kernel more buffers so loads "
              "overlap compute, and spread transfers over more DMA queues.",
              v.second, tp.name, v.first, cp.tracks[q].name),
          src, v.first));
    }
  }
}

// 2. Tiny instructions dominated by the fixed per-instruction cost.
void tiny_instructions(const RuleInput& in, std::vector<Suggestion>& out) {
  const CoreProfile& cp = in.cp;
  for (std::size_t t = 0; t < cp.tracks.size(); ++t) {
    const TrackProfile& tp = cp.tracks[t];
    if (!is_compute(tp.queue.engine) || tp.busy_ns <= 0) continue;
    auto pick = [&](const InstructionProfile& ip) {
      return ip.track == t && ip.bound == timing::Bound::kMinInitiationInterval;
    };
    const auto [count, ns, elems] = tally(cp, pick, [](const InstructionProfile& ip) {
      return ip.partitions ? static_cast<double>(ip.elements) / ip.partitions : 0.0;
    });
    const double pct = 100.0 * ns / tp.busy_ns;
    if (count < kTinyMinCount || pct < kTinyBusyPercent) continue;
    out.push_back(make_suggestion(
        "tiny_instructions", in,
        fmt::format("{} tiny {} instructions dominated by fixed overhead", count, tp.name),
        fmt::format(
            "{:.1f}% of {} busy time ({:.0f} ns) goes to instructions bound by the minimum "
            "initiation interval (average free size {:.0f} elements per partition). Grow the "
            "free size per instruction (larger tiles, fuse loops) so the fixed cost is "
            "amortised.",
            pct, tp.name, ns, elems / static_cast<double>(count)),
        common_source(cp, pick), ns));
  }
}

// 3. Partition dimension underused.
void partitions(const RuleInput& in, std::vector<Suggestion>& out) {
  constexpr std::uint32_t kFull = 128;
  const CoreProfile& cp = in.cp;
  for (std::size_t t = 0; t < cp.tracks.size(); ++t) {
    const TrackProfile& tp = cp.tracks[t];
    if (!is_compute(tp.queue.engine) || tp.busy_ns <= 0) continue;
    auto pick = [&](const InstructionProfile& ip) {
      return ip.track == t && ip.partitions > 0 && ip.partitions < kFull && busy(ip) > 0;
    };
    const auto [count, ns, parts] = tally(
        cp, pick, [](const InstructionProfile& ip) { return static_cast<double>(ip.partitions); });
    const double pct = 100.0 * ns / tp.busy_ns;
    if (count == 0 || pct < kPartitionBusyPercent) continue;
    const double average = parts / static_cast<double>(count);
    out.push_back(make_suggestion(
        "partitions", in,
        fmt::format("{} uses {:.0f} of {} partitions on average", tp.name, average, kFull),
        fmt::format(
            "{} {} instruction(s) ({:.1f}% of its busy time, {:.0f} ns) use fewer than {} "
            "partitions; lanes are idle. Put the dimension being processed on the partition "
            "axis (up to {}) or process several tiles per instruction.",
            count, tp.name, pct, ns, kFull, kFull),
        common_source(cp, pick), ns * (1.0 - average / kFull)));
  }
}

// 4. DMA with small contiguous runs.
void small_dma(const RuleInput& in, std::vector<Suggestion>& out) {
  const CoreProfile& cp = in.cp;
  double dma_busy = 0, ns = 0, bytes = 0, run = 0;
  std::size_t count = 0, transposes = 0;
  std::uint64_t descriptors = 0;
  auto pick = [&](const InstructionProfile& ip) {
    return ip.is_dma && ip.min_contiguous_bytes > 0 && ip.min_contiguous_bytes < kSmallRunBytes;
  };
  for (const auto& ip : cp.instructions) {
    if (!ip.is_dma) continue;
    dma_busy += busy(ip);
    if (!pick(ip)) continue;
    ++count;
    if (in.a.op_names[ip.op] == "dma_transpose") ++transposes;
    ns += busy(ip);
    bytes += static_cast<double>(ip.bytes);
    run += ip.min_contiguous_bytes;
    descriptors += ip.descriptors;
  }
  if (count == 0 || dma_busy <= 0 || 100.0 * ns / dma_busy < kSmallDmaBusyPercent) return;
  out.push_back(make_suggestion(
      "small_dma", in, fmt::format("{} DMA transfer(s) move data in small contiguous runs", count),
      fmt::format(
          "{:.0f} bytes in {} descriptors, contiguous runs of {:.0f} B on average (below {:.0f} "
          "B), {:.1f}% of DMA busy time. Change the layout so each partition's data is "
          "contiguous in HBM (transpose once, or load wider rows){}.",
          bytes, descriptors, run / static_cast<double>(count), kSmallRunBytes,
          100.0 * ns / dma_busy,
          // Advising dma_transpose for transfers that already are dma_transposes is no advice.
          transposes == count ? ", or transpose on the tensor engine (nc_transpose) instead"
          : transposes == 0   ? ", or use dma_transpose"
                              : ""),
      common_source(cp, pick), ns));
}

// 5. Vector-bound exponentials.
void vector_exp(const RuleInput& in, std::vector<Suggestion>& out) {
  const CoreProfile& cp = in.cp;
  for (std::size_t t = 0; t < cp.tracks.size(); ++t) {
    const TrackProfile& tp = cp.tracks[t];
    if (tp.queue.engine != isa::Engine::kVector || tp.busy_ns <= 0) continue;
    auto pick = [&](const InstructionProfile& ip) {
      return ip.track == t && in.a.op_names[ip.op] == "exponential";
    };
    const auto [count, ns, unused] = tally(cp, pick, [](const InstructionProfile&) { return 0.0; });
    const double vec_pct = 100.0 * tp.busy_ns / in.total;
    const double exp_pct = 100.0 * ns / tp.busy_ns;
    if (count == 0 || vec_pct < kVectorBusyPercent || exp_pct < kExpBusyPercent) continue;
    double scalar_pct = 0;
    for (const auto& other : cp.tracks)
      if (other.queue.engine == isa::Engine::kScalar) scalar_pct = other.active_percent;
    out.push_back(make_suggestion(
        "vector_exp", in,
        fmt::format("VectorE busy {:.1f}% with exponentials ({:.1f}% of its time)", vec_pct,
                    exp_pct),
        fmt::format(
            "{} exponential instruction(s) take {:.0f} ns of VectorE while ScalarE is active "
            "{:.1f}% of the run. Compute exp on ScalarE (activation func=exp, with the max "
            "subtraction as bias and reduce_res for the sum) to balance the engines.",
            count, ns, scalar_pct),
        common_source(cp, pick), ns / 2));
  }
}

// 6. Power-ramp throttling.
void power_ramp(const RuleInput& in, std::vector<Suggestion>& out) {
  const CoreProfile& cp = in.cp;
  for (const TrackProfile& tp : cp.tracks) {
    if (tp.queue.engine != isa::Engine::kTensor || tp.busy_ns <= 0) continue;
    const double thr = cp.metrics.throttled_ns;
    const double pct = 100.0 * thr / tp.busy_ns;
    if (thr <= 0 || pct < kThrottlePercent) continue;
    std::uint32_t src = 0;
    for (const auto& ip : cp.instructions)
      if (cp.tracks[ip.track].queue.engine == isa::Engine::kTensor) {
        src = ip.source;
        break;
      }
    out.push_back(make_suggestion(
        "power_ramp", in,
        fmt::format("TensorE throttled {:.0f} ns by the power ramp ({:.1f}% of its busy time)", thr,
                    pct),
        "The utilisation limit starts low after TensorE has been idle and rises over a few "
        "microseconds of continuous work. Keep TensorE fed without long gaps (prefetch so "
        "matmuls run back to back), or start with useful warm-up work.",
        src, thr));
  }
}

// The rules, in the order docs/profiler.md lists them; each reads one core's profile and
// adds what it finds.
struct Rule {
  std::string_view name;
  void (*apply)(const RuleInput&, std::vector<Suggestion>&);
};
constexpr Rule kRules[] = {
    {"dma_wait", dma_wait},     {"tiny_instructions", tiny_instructions},
    {"partitions", partitions}, {"small_dma", small_dma},
    {"vector_exp", vector_exp}, {"power_ramp", power_ramp},
};

}  // namespace

std::vector<std::string_view> suggestion_rules() {
  std::vector<std::string_view> names;
  for (const Rule& r : kRules) names.push_back(r.name);
  return names;
}

std::vector<Suggestion> suggest(const Analysis& a) {
  std::vector<Suggestion> out;
  for (const CoreProfile& cp : a.cores) {
    if (cp.metrics.total_ns <= 0) continue;
    const RuleInput in{a, cp, cp.metrics.total_ns};
    for (const Rule& r : kRules) r.apply(in, out);
  }
  std::stable_sort(out.begin(), out.end(), [](const Suggestion& x, const Suggestion& y) {
    return x.impact_ns > y.impact_ns;
  });
  return out;
}

}  // namespace trnsim::profile
