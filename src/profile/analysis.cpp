// Post-hoc analysis of timed core runs: per-instruction costs, stall attribution,
// dependencies, metrics and counters (docs/profiler.md).
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <utility>

#include "isa/asm.h"
#include "profile/detail.h"
#include "profile/profile.h"
#include "util/enum_names.h"
#include "util/read_file.h"

namespace trnsim::profile {

namespace detail {

std::string queue_name(const isa::QueueId& q) {
  if (q.engine == isa::Engine::kDma) return fmt::format("dma.{}", q.index);
  return std::string(isa::engine_name(q.engine));
}

namespace {
int queue_key(const isa::QueueId& q) {
  return static_cast<int>(q.engine) * 256 + q.index;
}
}  // namespace

Tracks assign_tracks(const isa::Program& program) {
  Tracks t;
  std::vector<int> slot(isa::kNumEngines * 256, -1);
  std::vector<int> keys;
  for (const auto& inst : program.instructions) {
    const int k = queue_key(inst.queue);
    if (slot[static_cast<std::size_t>(k)] < 0) {
      slot[static_cast<std::size_t>(k)] = 0;
      keys.push_back(k);
    }
  }
  std::sort(keys.begin(), keys.end());  // engine order, then DMA queue number
  for (std::size_t i = 0; i < keys.size(); ++i) {
    slot[static_cast<std::size_t>(keys[i])] = static_cast<int>(i);
    t.queues.push_back(
        {static_cast<isa::Engine>(keys[i] / 256), static_cast<std::uint8_t>(keys[i] % 256)});
  }
  t.of_instruction.reserve(program.instructions.size());
  for (const auto& inst : program.instructions)
    t.of_instruction.push_back(
        static_cast<std::uint16_t>(slot[static_cast<std::size_t>(queue_key(inst.queue))]));
  return t;
}

Attribution attribute_stalls(const isa::Program& program, const sim::RunResult& result,
                             const Tracks& tracks) {
  const std::size_t n = program.instructions.size();
  if (result.times.size() != n)
    throw std::invalid_argument(
        fmt::format("profile: the run has {} instruction times for a program of {} instructions",
                    result.times.size(), n));
  Attribution a;
  a.queue_free.assign(n, 0.0);
  a.released_by.assign(n, -1);
  a.wait_sem.assign(n, -1);
  a.wait_offsets.assign(n + 1, 0);

  // When each queue became free for each instruction: the previous one's occupied_until.
  std::vector<double> free_at(tracks.queues.size(), 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto t = tracks.of_instruction[i];
    a.queue_free[i] = free_at[t];
    free_at[t] = result.times[i].occupied_until;
  }

  // Replay the signals in the order they fired: (end time, queue, index).
  std::vector<std::uint32_t> order;
  for (std::size_t i = 0; i < n; ++i)
    if (!program.instructions[i].signals.empty()) order.push_back(static_cast<std::uint32_t>(i));
  std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
    return std::tuple(result.times[x].end, tracks.of_instruction[x], x) <
           std::tuple(result.times[y].end, tracks.of_instruction[y], y);
  });
  struct Release {
    std::uint64_t value;  // semaphore value after this signal
    std::uint32_t by;
  };
  std::vector<std::vector<Release>> releases(isa::kNumSemaphores);
  std::vector<std::uint64_t> value(isa::kNumSemaphores, 0);
  for (std::uint32_t i : order)
    for (const auto& s : program.instructions[i].signals) {
      value[s.sem] += s.increment;
      releases[s.sem].push_back({value[s.sem], i});
    }

  for (std::size_t i = 0; i < n; ++i) {
    const auto& inst = program.instructions[i];
    double last = -1.0;
    for (const auto& w : inst.waits) {
      std::int64_t by = -1;
      double at = 0.0;
      if (w.value > 0) {
        const auto& list = releases[w.sem];
        const auto it =
            std::lower_bound(list.begin(), list.end(), std::uint64_t{w.value},
                             [](const Release& r, std::uint64_t v) { return r.value < v; });
        if (it != list.end()) {
          by = it->by;
          at = result.times[it->by].end;
        }
      }
      a.wait_releasers.push_back(by);
      a.wait_sems.push_back(static_cast<std::int16_t>(w.sem));
      if (by >= 0 && at > last) {
        last = at;
        a.released_by[i] = by;
        a.wait_sem[i] = static_cast<std::int16_t>(w.sem);
      }
    }
    a.wait_offsets[i + 1] = static_cast<std::uint32_t>(a.wait_releasers.size());
  }
  return a;
}

namespace {

std::uint64_t bytes_of(const isa::AccessPattern& ap) {
  return ap.total_elements() * ap.element_bytes();
}

}  // namespace

Costs CostReplay::next(const isa::Instruction& inst) {
  Costs c;
  // Operand sizes and memory traffic from the access patterns.
  std::uint64_t largest = 0;
  isa::for_each_operand(inst.op, [&](const isa::AccessPattern& ap, const isa::OperandRef& operand) {
    const std::uint64_t b = bytes_of(ap);
    const bool reads = operand.reads();
    const bool writes = operand.writes();
    if (ap.memory == isa::Memory::kSbuf) {
      if (reads) c.sbuf_read += b;
      if (writes) c.sbuf_write += b;
    } else if (ap.memory == isa::Memory::kPsum) {
      if (reads) c.psum_read += b;
      if (writes) c.psum_write += b;
    }
    // The largest operand sizes the instruction; an on-chip one names the partitions used.
    const std::uint64_t size =
        ap.total_elements() + (ap.memory == isa::Memory::kHbm ? 0 : (1ull << 62));
    if (size > largest) {
      largest = size;
      c.elements = ap.total_elements();
      c.partitions = ap.partitions;
    }
  });
  if (isa::is_dma_transfer(inst.op)) {
    const timing::DmaPlan plan = model_.plan_dma(inst);
    c.dma = true;
    c.bytes = plan.total_bytes;
    for (const auto& w : plan.engines) {
      c.hbm_bytes += w.hbm_bytes;
      c.descriptors += w.descriptors;
    }
    c.min_contiguous_bytes = plan.min_contiguous_bytes;
    // plan_dma counts HBM bytes per engine share; DMA has no compute-style bound.
    return c;
  }
  timing::TensorEngineState scratch;
  timing::TensorEngineState& state = inst.queue.engine == isa::Engine::kTensor ? tensor_ : scratch;
  const timing::ComputeCost cost = model_.compute(inst, state);
  c.flops = cost.flops;
  c.bytes = cost.bytes_read + cost.bytes_written;
  c.bound = cost.bound;
  if (inst.queue.engine == isa::Engine::kTensor) {
    if (const auto* tr = std::get_if<isa::NcTranspose>(&inst.op)) {
      // data [P, F] (stationary) against a P x P identity (moving): 2 x P x F x P.
      const double p = tr->data.partitions;
      c.transpose_flops = 2.0 * p * static_cast<double>(tr->data.free_elements()) * p;
    } else if (const auto* mm = std::get_if<isa::NcMatmul>(&inst.op); mm && mm->is_transpose) {
      c.transpose_flops = 2.0 * mm->moving.partitions *
                          static_cast<double>(mm->stationary.free_elements()) *
                          static_cast<double>(mm->moving.free_elements());
    }
  }
  return c;
}

std::string tensor_mode(const sim::TimingReport* report) {
  if (report && !report->tensor_mode.empty()) return report->tensor_mode;
  return "bf16";
}

void json_string(std::string& out, std::string_view s) {
  out += '"';
  for (const char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      case '<':
        out += "\\u003c";
        break;  // never "</script>" inside an HTML report
      default:
        if (u < 0x20) {
          out += fmt::format("\\u{:04x}", u);
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

}  // namespace detail

std::string_view stall_cause_name(StallCause c) {
  static constexpr std::array<std::string_view, 5> kNames = {"none", "dma", "engine", "barrier",
                                                             "unresolved"};
  return util::enum_name(kNames, c);
}

std::string dependency_name(std::uint8_t bits) {
  std::string s;
  auto add = [&](std::uint8_t bit, const char* name) {
    if (!(bits & bit)) return;
    if (!s.empty()) s += '+';
    s += name;
  };
  add(kDepFlow, "flow");
  add(kDepAnti, "anti");
  add(kDepOutput, "output");
  return s.empty() ? "order" : s;
}

namespace {

struct Footprint {
  isa::Memory memory;
  std::uint32_t p_lo, p_hi;
  std::int64_t b_lo, b_hi;
  bool reads, writes;
};

std::vector<Footprint> footprints(const isa::Instruction& inst) {
  std::vector<Footprint> fs;
  isa::for_each_operand(inst.op, [&](const isa::AccessPattern& ap, const isa::OperandRef& operand) {
    const auto [lo, hi] = ap.byte_span();
    Footprint f{ap.memory, 0, 1, lo, hi, operand.reads(), operand.writes()};
    if (ap.memory != isa::Memory::kHbm) {
      f.p_lo = ap.start_partition;
      f.p_hi = ap.start_partition + ap.partitions;
    }
    fs.push_back(f);
  });
  return fs;
}

bool overlaps(const Footprint& a, const Footprint& b) {
  return a.memory == b.memory && a.p_lo < b.p_hi && b.p_lo < a.p_hi && a.b_lo < b.b_hi &&
         b.b_lo < a.b_hi;
}

std::uint8_t dependency_kinds(const std::vector<Footprint>& pred,
                              const std::vector<Footprint>& succ) {
  std::uint8_t kinds = 0;
  for (const auto& p : pred)
    for (const auto& s : succ) {
      if (!overlaps(p, s)) continue;
      if (p.writes && s.reads) kinds |= kDepFlow;
      if (p.reads && s.writes) kinds |= kDepAnti;
      if (p.writes && s.writes) kinds |= kDepOutput;
    }
  return kinds;
}

}  // namespace

void detail::spread(std::vector<double>& buckets, double w, double lo, double hi, double amount) {
  if (buckets.empty() || w <= 0 || amount == 0) return;
  const auto last = static_cast<std::ptrdiff_t>(buckets.size()) - 1;
  auto clamp_index = [&](double t) {
    return std::clamp(static_cast<std::ptrdiff_t>(std::floor(t / w)), std::ptrdiff_t{0}, last);
  };
  if (hi <= lo) {
    buckets[static_cast<std::size_t>(clamp_index(lo))] += amount;
    return;
  }
  const double rate = amount / (hi - lo);
  for (std::ptrdiff_t b = clamp_index(lo); b <= clamp_index(hi); ++b) {
    const double b_lo = static_cast<double>(b) * w, b_hi = b_lo + w;
    const double o = std::min(hi, b_hi) - std::max(lo, b_lo);
    if (o > 0) buckets[static_cast<std::size_t>(b)] += rate * o;
  }
}

namespace {

double percent(double part, double whole) {
  return whole > 0 ? 100.0 * part / whole : 0.0;
}

constexpr double kEps = 1e-6;

// Names shared by every core of an analysis: operation names and source lines, interned.
struct Interning {
  Analysis& a;
  std::map<std::pair<std::string, std::uint32_t>, std::uint32_t> source_index;
  std::map<std::string, std::uint16_t, std::less<>> op_index;

  std::uint16_t op(std::string_view name) {
    auto it = op_index.find(name);
    if (it == op_index.end()) {
      it = op_index.emplace(std::string(name), static_cast<std::uint16_t>(a.op_names.size())).first;
      a.op_names.emplace_back(name);
    }
    return it->second;
  }
  // 0 (the empty source) for an instruction without an origin.
  std::uint32_t source(const isa::Origin& origin) {
    if (!origin.known()) return 0;
    auto key = std::make_pair(origin.file, origin.line);
    auto it = source_index.find(key);
    if (it == source_index.end()) {
      it = source_index.emplace(key, static_cast<std::uint32_t>(a.sources.size())).first;
      a.sources.push_back({origin.file, origin.line, 0, 0, 0, 0});
    }
    return it->second;
  }
};

// One core's analysis while its instructions are walked.
struct CoreWalk {
  const arch::ChipConfig& chip;
  const isa::Program& program;
  const sim::RunResult& result;
  detail::Tracks tracks;
  detail::Attribution attr;
  detail::CostReplay replay;
  CoreProfile cp;
  std::vector<std::pair<double, double>> dma_intervals;  // [start, end) of each transfer
  std::map<std::string, StallBucket> stall_map;

  CoreWalk(const arch::ChipConfig& c, const CoreRun& run)
      : chip(c),
        program(*run.program),
        result(*run.result),
        tracks(detail::assign_tracks(program)),
        attr(detail::attribute_stalls(program, result, tracks)),
        replay(c) {}

  void add_stall(const std::string& key, const char* group, double ns) {
    StallBucket& b = stall_map[key];
    b.key = key;
    b.group = group;
    b.ns += ns;
    ++b.instructions;
  }
};

// The core's header: run time, peaks, one track per queue, empty counters.
void begin_core(CoreWalk& w, const CoreRun& run, const AnalyzeOptions& options) {
  CoreProfile& cp = w.cp;
  cp.core = run.core;
  Metrics& m = cp.metrics;
  m.total_ns = run.timing ? run.timing->total_ns : w.result.end_time;
  for (const auto& t : w.result.times) m.total_ns = std::max(m.total_ns, t.end);
  m.tensor_mode = detail::tensor_mode(run.timing);
  m.peak_flops_per_s = w.replay.model().tensor_peak_flops(m.tensor_mode);
  m.hbm_bandwidth_bytes_per_s =
      w.chip.hbm.bandwidth_gbps * 1e9 / std::max(1, w.chip.cores_per_chip);
  if (run.timing) {
    m.throttled_ns = run.timing->throttled_ns;
    m.hbm_limited_ns = run.timing->hbm_limited_ns;
  }
  for (const auto& q : w.tracks.queues) {
    TrackProfile tp;
    tp.queue = q;
    tp.name = detail::queue_name(q);
    cp.tracks.push_back(tp);
  }
  const int nb = std::max(1, options.counter_buckets);
  Counters& ctr = cp.counters;
  ctr.bucket_ns = m.total_ns > 0 ? m.total_ns / nb : 1.0;
  ctr.hbm_bytes_per_s.assign(static_cast<std::size_t>(nb), 0.0);
  ctr.sbuf_bytes.assign(static_cast<std::size_t>(nb), 0.0);
  ctr.psum_bytes.assign(static_cast<std::size_t>(nb), 0.0);
  ctr.track_util.assign(w.tracks.queues.size(),
                        std::vector<double>(static_cast<std::size_t>(nb), 0.0));
  cp.instructions.resize(w.program.instructions.size());
}

// Stall: the gap between the queue becoming free and the start, and what released it.
void attribute_stall(CoreWalk& w, std::size_t i, InstructionProfile& ip) {
  const sim::InstructionTime& time = w.result.times[i];
  const double gap = time.start - w.attr.queue_free[i];
  ip.wait_sem = w.attr.wait_sem[i];
  ip.released_by = w.attr.released_by[i];
  if (ip.released_by >= 0)
    ip.released_track = w.tracks.of_instruction[static_cast<std::size_t>(ip.released_by)];
  if (gap <= kEps) return;
  ip.stall_ns = gap;
  if (ip.released_by >= 0 &&
      w.result.times[static_cast<std::size_t>(ip.released_by)].end > w.attr.queue_free[i] + kEps) {
    const isa::QueueId& rq = w.tracks.queues[ip.released_track];
    ip.cause = rq.engine == isa::Engine::kDma ? StallCause::kDma : StallCause::kEngine;
    w.add_stall(fmt::format("s{}", ip.wait_sem), "semaphore", gap);
    w.add_stall(detail::queue_name(rq), "queue", gap);
  } else if (std::holds_alternative<isa::CoreBarrier>(w.program.instructions[i].op)) {
    ip.cause = StallCause::kBarrier;
    w.add_stall("barrier", "other", gap);
  } else if (isa::meets_other_cores(w.program.instructions[i].op)) {
    // A sendrecv or collective starts its transfer when its peers have started too: waiting
    // for other cores, as at a barrier.
    ip.cause = StallCause::kBarrier;
    w.add_stall(fmt::format("{} peer", isa::op_name(w.program.instructions[i].op)), "other", gap);
  } else {
    ip.cause = StallCause::kUnresolved;
    w.add_stall("unresolved", "other", gap);
  }
}

// Adds one instruction's busy time, work and traffic to its track, the core's metrics, the
// counters and its source line.
void accumulate(CoreWalk& w, Analysis& a, const InstructionProfile& ip, const detail::Costs& c,
                const sim::InstructionTime& time) {
  Metrics& m = w.cp.metrics;
  Counters& ctr = w.cp.counters;
  TrackProfile& tp = w.cp.tracks[ip.track];
  const double busy = std::max(0.0, time.occupied_until - time.start);
  ++tp.instructions;
  tp.busy_ns += busy;
  tp.stalled_ns += ip.stall_ns;
  m.stall_ns += ip.stall_ns;
  tp.flops += c.flops;
  tp.bytes += c.bytes;
  tp.elements += c.elements;
  m.model_flops += c.flops;
  m.transpose_flops += c.transpose_flops;
  m.sb_read_bytes += c.sbuf_read;
  m.sb_write_bytes += c.sbuf_write;
  m.psum_read_bytes += c.psum_read;
  m.psum_write_bytes += c.psum_write;
  if (c.dma) {
    m.dma_bytes += c.bytes;
    m.hbm_bytes += c.hbm_bytes;
    ++m.dma_transfers;
    w.dma_intervals.emplace_back(time.start, std::max(time.end, time.occupied_until));
    detail::spread(ctr.hbm_bytes_per_s, ctr.bucket_ns, time.start, std::max(time.end, time.start),
                   static_cast<double>(c.hbm_bytes));
  }
  detail::spread(ctr.track_util[ip.track], ctr.bucket_ns, time.start, time.occupied_until, busy);
  detail::spread(ctr.sbuf_bytes, ctr.bucket_ns, time.start, time.occupied_until,
                 static_cast<double>(c.sbuf_read + c.sbuf_write));
  detail::spread(ctr.psum_bytes, ctr.bucket_ns, time.start, time.occupied_until,
                 static_cast<double>(c.psum_read + c.psum_write));
  SourceLine& sl = a.sources[ip.source];
  sl.busy_ns += busy;
  sl.stall_ns += ip.stall_ns;
  sl.flops += c.flops;
  ++sl.instructions;
}

// The profile of instruction i: its costs replayed, times, stall and where it came from.
void profile_instruction(CoreWalk& w, Analysis& a, Interning& names, std::size_t i) {
  const isa::Instruction& inst = w.program.instructions[i];
  const sim::InstructionTime& time = w.result.times[i];
  const detail::Costs c = w.replay.next(inst);
  InstructionProfile& ip = w.cp.instructions[i];
  ip.index = static_cast<std::uint32_t>(i);
  ip.track = w.tracks.of_instruction[i];
  ip.op = names.op(isa::op_name(inst.op));
  ip.source = names.source(inst.origin);
  ip.start = time.start;
  ip.end = time.end;
  ip.occupied_until = time.occupied_until;
  ip.flops = c.flops;
  ip.transpose_flops = c.transpose_flops;
  ip.bytes = c.bytes;
  ip.hbm_bytes = c.hbm_bytes;
  ip.sbuf_bytes = c.sbuf_read + c.sbuf_write;
  ip.psum_bytes = c.psum_read + c.psum_write;
  ip.descriptors = c.descriptors;
  ip.min_contiguous_bytes = c.min_contiguous_bytes;
  ip.partitions = c.partitions;
  ip.elements = c.elements;
  ip.bound = c.bound;
  ip.is_dma = c.dma;
  attribute_stall(w, i, ip);
  accumulate(w, a, ip, c, time);
}

// Dependency edges: queue order and semaphore releases, kinds from the footprints.
void add_dependency_edges(CoreWalk& w) {
  const std::size_t n = w.program.instructions.size();
  std::vector<std::int64_t> prev_in_track(w.tracks.queues.size(), -1);
  std::vector<std::vector<Footprint>> fp_cache;  // computed lazily would cost more code
  fp_cache.reserve(n);
  for (const auto& inst : w.program.instructions) fp_cache.push_back(footprints(inst));
  for (std::size_t i = 0; i < n; ++i) {
    const auto to = static_cast<std::uint32_t>(i);
    std::vector<Edge> mine;
    auto add_edge = [&](std::int64_t from, bool sem_edge, std::int16_t sem) {
      if (from < 0) return;
      for (auto& e : mine)
        if (e.from == from) {
          if (sem_edge && !e.semaphore) {
            e.semaphore = true;
            e.sem = sem;
          }
          return;
        }
      Edge e;
      e.from = static_cast<std::uint32_t>(from);
      e.to = to;
      e.semaphore = sem_edge;
      e.sem = sem;
      e.kinds = dependency_kinds(fp_cache[static_cast<std::size_t>(from)], fp_cache[i]);
      mine.push_back(e);
    };
    add_edge(prev_in_track[w.tracks.of_instruction[i]], false, -1);
    for (std::uint32_t k = w.attr.wait_offsets[i]; k < w.attr.wait_offsets[i + 1]; ++k)
      add_edge(w.attr.wait_releasers[k], true, w.attr.wait_sems[k]);
    prev_in_track[w.tracks.of_instruction[i]] = static_cast<std::int64_t>(i);
    w.cp.edges.insert(w.cp.edges.end(), mine.begin(), mine.end());
  }
}

// Time during which at least one transfer was in flight (the union of their intervals).
double union_length(std::vector<std::pair<double, double>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  double length = 0, cur_lo = 0, cur_hi = -1;
  for (const auto& [lo, hi] : intervals) {
    if (lo > cur_hi) {
      if (cur_hi > cur_lo) length += cur_hi - cur_lo;
      cur_lo = lo;
      cur_hi = hi;
    } else {
      cur_hi = std::max(cur_hi, hi);
    }
  }
  if (cur_hi > cur_lo) length += cur_hi - cur_lo;
  return length;
}

// The core's rates against peak (MFU, HFU, MBU, DMA activity).
void finish_metrics(CoreWalk& w) {
  Metrics& m = w.cp.metrics;
  const double total = m.total_ns;
  const double seconds = total * 1e-9;
  m.dma_active_time_percent = percent(union_length(w.dma_intervals), total);
  m.average_dma_size =
      m.dma_transfers ? static_cast<double>(m.dma_bytes) / static_cast<double>(m.dma_transfers) : 0;
  if (seconds > 0) {
    m.achieved_flops_per_s = m.model_flops / seconds;
    m.achieved_hbm_bytes_per_s = static_cast<double>(m.hbm_bytes) / seconds;
    m.mfu_percent = percent(m.model_flops, m.peak_flops_per_s * seconds);
    m.hfu_percent = percent(m.model_flops + m.transpose_flops, m.peak_flops_per_s * seconds);
    m.mbu_percent =
        percent(static_cast<double>(m.hbm_bytes), m.hbm_bandwidth_bytes_per_s * seconds);
  }
  m.mm_arithmetic_intensity = m.hbm_bytes ? m.model_flops / static_cast<double>(m.hbm_bytes) : 0;
  m.peak_flops_bandwidth_ratio =
      m.hbm_bandwidth_bytes_per_s > 0 ? m.peak_flops_per_s / m.hbm_bandwidth_bytes_per_s : 0;
}

// Each track's achieved rate against its engine's peak, and the bounding engine.
void finish_tracks(CoreWalk& w) {
  const arch::ChipConfig& chip = w.chip;
  Metrics& m = w.cp.metrics;
  const double seconds = m.total_ns * 1e-9;
  m.dma_engines = static_cast<std::uint32_t>(std::max(0.0, chip.dma.engines_per_core.value));
  m.dma_peak_bytes_per_s = m.dma_engines * chip.dma.engine_bandwidth_gbps * 1e9;
  m.achieved_dma_bytes_per_s = seconds > 0 ? static_cast<double>(m.dma_bytes) / seconds : 0;
  for (TrackProfile& tp : w.cp.tracks) {
    tp.active_percent = percent(tp.busy_ns, m.total_ns);
    switch (tp.queue.engine) {
      case isa::Engine::kTensor:
        tp.unit = "FLOP/s";
        tp.peak_per_s = m.peak_flops_per_s;
        tp.achieved_per_s = seconds > 0 ? tp.flops / seconds : 0;
        break;
      case isa::Engine::kVector:
      case isa::Engine::kScalar: {
        const auto& e = tp.queue.engine == isa::Engine::kVector ? chip.vector : chip.scalar;
        tp.unit = "elem/s";
        tp.peak_per_s = e.elems_per_cycle_16bit * e.clock_ghz * 1e9;
        tp.achieved_per_s = seconds > 0 ? static_cast<double>(tp.elements) / seconds : 0;
        break;
      }
      case isa::Engine::kGpSimd:
        tp.unit = "elem/s";
        tp.peak_per_s =
            chip.gpsimd.cores * chip.gpsimd.lane_bits / 32.0 * chip.gpsimd.clock_ghz * 1e9;
        tp.achieved_per_s = seconds > 0 ? static_cast<double>(tp.elements) / seconds : 0;
        break;
      case isa::Engine::kDma:
        // No peak of its own: every queue's transfers run on the same engines (one transfer in
        // flight per queue, each spread over up to all of them), so the engines' peak bounds
        // the queues' sum, Metrics::dma_peak_bytes_per_s, not each queue.
        tp.unit = "B/s";
        tp.achieved_per_s = seconds > 0 ? static_cast<double>(tp.bytes) / seconds : 0;
        break;
      case isa::Engine::kSync:
        break;
    }
    if (tp.queue.engine != isa::Engine::kDma && tp.queue.engine != isa::Engine::kSync &&
        tp.active_percent > m.bounding_active_percent) {
      m.bounding_active_percent = tp.active_percent;
      m.bounding_engine = tp.name;
    }
  }
  if (m.dma_active_time_percent > m.bounding_active_percent) {
    m.bounding_active_percent = m.dma_active_time_percent;
    m.bounding_engine = "dma";
  }
}

// The stall buckets, largest first (HBM-limited time is one of them). Shares are of the
// core's stall time, which sums the parallel queues' stalls; HBM-limited time is DMA engine
// time, so its share is of the engines' time.
void finish_stalls(CoreWalk& w) {
  const Metrics& m = w.cp.metrics;
  if (m.hbm_limited_ns > 0) {
    StallBucket& b = w.stall_map["hbm"];
    b.key = "hbm";
    b.group = "hbm";
    b.ns += m.hbm_limited_ns;
  }
  for (auto& [key, b] : w.stall_map) {
    b.percent =
        b.group == "hbm" ? percent(b.ns, m.total_ns * m.dma_engines) : percent(b.ns, m.stall_ns);
    w.cp.stalls.push_back(b);
  }
  std::sort(w.cp.stalls.begin(), w.cp.stalls.end(),
            [](const StallBucket& x, const StallBucket& y) { return x.ns > y.ns; });
}

template <class T>
void insert_sorted_unique(std::vector<T>& v, T x) {
  const auto it = std::lower_bound(v.begin(), v.end(), x);
  if (it == v.end() || *it != x) v.insert(it, x);
}

// Stall time by (waiting source line, releasing source line, cause), largest first; the
// semaphores and queues involved are details of a pair (a loop rotating over semaphores or
// queues stays one pair). Needs every instruction's source, the releaser's included.
void finish_stall_lines(CoreWalk& w) {
  using Key = std::tuple<std::uint32_t, std::uint32_t, StallCause>;
  std::map<Key, StallLinePair> pairs;
  for (const InstructionProfile& ip : w.cp.instructions) {
    if (ip.cause == StallCause::kNone) continue;
    const bool released = ip.cause == StallCause::kDma || ip.cause == StallCause::kEngine;
    const std::uint32_t releasing =
        released ? w.cp.instructions[static_cast<std::size_t>(ip.released_by)].source : 0;
    StallLinePair& p = pairs[Key{ip.source, releasing, ip.cause}];
    p.waiting_source = ip.source;
    p.releasing_source = releasing;
    p.cause = ip.cause;
    p.ns += ip.stall_ns;
    ++p.instructions;
    insert_sorted_unique(p.waiting_tracks, ip.track);
    if (released) {
      insert_sorted_unique(p.semaphores, ip.wait_sem);
      insert_sorted_unique(p.releasing_tracks, ip.released_track);
    }
  }
  auto& lines = w.cp.stall_lines;
  for (auto& [key, p] : pairs) {
    p.percent = percent(p.ns, w.cp.metrics.stall_ns);
    lines.push_back(std::move(p));
  }
  // Stable: equal times keep the (waiting, releasing) source order.
  std::stable_sort(lines.begin(), lines.end(),
                   [](const StallLinePair& x, const StallLinePair& y) { return x.ns > y.ns; });
}

// Fills SourceLine::code from the source files (each read once, at most 16 MiB; a file that
// cannot be read leaves its lines without code). Lines are trimmed and cut at 200 bytes.
void read_source_code(Analysis& a) {
  constexpr std::uint64_t kMaxFileBytes = std::uint64_t{16} << 20;
  constexpr std::size_t kMaxLineBytes = 200;
  std::map<std::string, std::vector<std::string>> files;
  for (SourceLine& s : a.sources) {
    if (s.file.empty() || s.line == 0) continue;
    auto it = files.find(s.file);
    if (it == files.end()) {
      std::vector<std::string> lines;
      try {
        std::istringstream in(util::read_file(s.file, kMaxFileBytes, "source file"));
        for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
      } catch (const util::Error&) {
        // Not readable here (moved, another machine): the explorer shows file:line only.
      }
      it = files.emplace(s.file, std::move(lines)).first;
    }
    if (s.line > it->second.size()) continue;
    std::string_view code = it->second[s.line - 1];
    const std::size_t first = code.find_first_not_of(" \t");
    code = first == std::string_view::npos ? std::string_view() : code.substr(first);
    while (!code.empty() && (code.back() == '\r' || code.back() == ' ')) code.remove_suffix(1);
    s.code = std::string(code.substr(0, kMaxLineBytes));
  }
}

}  // namespace

Analysis analyze(const ProfileInput& given, const AnalyzeOptions& options) {
  if (!given.chip) throw std::invalid_argument("profile: ProfileInput::chip is null");
  const detail::StraightLine straight(given);
  const ProfileInput& input = straight.input();
  Analysis a;
  a.title = input.title;
  a.chip = input.chip->name;
  a.sources.push_back({});
  Interning names{a, {}, {}};
  for (const CoreRun& run : input.cores) {
    if (!run.program || !run.result)
      throw std::invalid_argument("profile: a CoreRun has no program or result");
    CoreWalk w(*input.chip, run);
    begin_core(w, run, options);
    const std::size_t n = w.program.instructions.size();
    std::vector<std::string> text;
    if (options.keep_text) text.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      profile_instruction(w, a, names, i);
      if (options.keep_text) text.push_back(isa::print_instruction(w.program.instructions[i]));
    }
    if (options.keep_text) a.text.push_back(std::move(text));
    Counters& ctr = w.cp.counters;
    if (ctr.bucket_ns > 0) {
      for (double& v : ctr.hbm_bytes_per_s) v = v / ctr.bucket_ns * 1e9;
      for (auto& u : ctr.track_util)
        for (double& v : u) v = std::min(1.0, v / ctr.bucket_ns);
    }
    add_dependency_edges(w);
    finish_metrics(w);
    finish_tracks(w);
    finish_stalls(w);
    finish_stall_lines(w);
    a.total_ns = std::max(a.total_ns, w.cp.metrics.total_ns);
    a.cores.push_back(std::move(w.cp));
  }
  if (options.read_source_code) read_source_code(a);
  a.suggestions = suggest(a);
  return a;
}

}  // namespace trnsim::profile
