// Chrome trace-event JSON, streamed: events are formatted into a small buffer that is flushed
// as it fills, so the memory used is a few numbers per instruction, never the events.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "isa/asm.h"
#include "profile/detail.h"
#include "profile/profile.h"

namespace trnsim::profile {

namespace {

class Sink {
 public:
  explicit Sink(std::ostream& out) : out_(out) { buf_.reserve(kFlush + 4096); }
  ~Sink() { flush(); }
  Sink(const Sink&) = delete;
  Sink& operator=(const Sink&) = delete;
  std::string& buf() { return buf_; }
  // Starts an event: a comma unless it is the first.
  void begin_event() {
    if (!first_) buf_ += ",\n";
    first_ = false;
    if (buf_.size() >= kFlush) flush();
  }
  void flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }

 private:
  static constexpr std::size_t kFlush = 1 << 20;
  std::ostream& out_;
  std::string buf_;
  bool first_ = true;
};

// Microseconds with nanosecond resolution; rounding keeps the order of the inputs.
void us(std::string& b, double ns) {
  fmt::format_to(std::back_inserter(b), "{:.3f}", ns * 1e-3);
}

std::string_view dtype_of(const isa::Instruction& inst) {
  std::string_view name;
  isa::for_each_operand(inst.op, [&](const isa::AccessPattern& ap, const isa::OperandRef& operand) {
    if (name.empty() && operand.writes()) name = numerics::name(ap.dtype);
  });
  if (name.empty())
    isa::for_each_operand(inst.op, [&](const isa::AccessPattern& ap, const isa::OperandRef&) {
      if (name.empty()) name = numerics::name(ap.dtype);
    });
  return name;
}

}  // namespace

void write_chrome_trace(const ProfileInput& input, std::ostream& out, const TraceOptions& options) {
  if (!input.chip) throw std::invalid_argument("profile: ProfileInput::chip is null");
  Sink sink(out);
  std::string& b = sink.buf();
  b += "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"trnsim profile\",\"title\":";
  detail::json_string(b, input.title);
  b += ",\"chip\":";
  detail::json_string(b, input.chip->name);
  b += "},\"traceEvents\":[\n";
  auto out_it = [&] { return std::back_inserter(b); };

  std::uint64_t flow_base = 0;
  for (const CoreRun& run : input.cores) {
    if (!run.program || !run.result)
      throw std::invalid_argument("profile: a CoreRun has no program or result");
    const isa::Program& program = *run.program;
    const sim::RunResult& result = *run.result;
    const std::size_t n = program.instructions.size();
    const int pid = run.core;
    const detail::Tracks tracks = detail::assign_tracks(program);
    detail::Attribution attr = detail::attribute_stalls(program, result, tracks);
    // Free what only the dependency analysis needs.
    attr.wait_releasers = {};
    attr.wait_sems = {};
    attr.wait_offsets = {};

    // Who each instruction released (CSR over released_by) for the flow starts.
    std::vector<std::uint32_t> rel_offsets(n + 1, 0), rel_targets;
    if (options.flows) {
      for (std::size_t i = 0; i < n; ++i)
        if (attr.released_by[i] >= 0)
          ++rel_offsets[static_cast<std::size_t>(attr.released_by[i]) + 1];
      for (std::size_t i = 0; i < n; ++i) rel_offsets[i + 1] += rel_offsets[i];
      rel_targets.resize(rel_offsets[n]);
      std::vector<std::uint32_t> fill(rel_offsets.begin(), rel_offsets.end() - 1);
      for (std::size_t i = 0; i < n; ++i)
        if (attr.released_by[i] >= 0)
          rel_targets[fill[static_cast<std::size_t>(attr.released_by[i])]++] =
              static_cast<std::uint32_t>(i);
    }

    // Metadata: the process and its tracks.
    sink.begin_event();
    fmt::format_to(out_it(),
                   "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"tid\":0,\"args\":{{"
                   "\"name\":\"core {}\"}}}}",
                   pid, pid);
    sink.begin_event();
    fmt::format_to(out_it(),
                   "{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{},\"tid\":0,\"args\":{{"
                   "\"sort_index\":{}}}}}",
                   pid, pid);
    for (std::size_t t = 0; t < tracks.queues.size(); ++t) {
      sink.begin_event();
      fmt::format_to(out_it(),
                     "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},\"args\":{{"
                     "\"name\":\"{}\"}}}}",
                     pid, t + 1, detail::queue_name(tracks.queues[t]));
      sink.begin_event();
      fmt::format_to(out_it(),
                     "{{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":{},\"tid\":{},\"args\":"
                     "{{\"sort_index\":{}}}}}",
                     pid, t + 1, t + 1);
    }

    double total = result.end_time;
    for (const auto& t : result.times) total = std::max(total, t.end);
    const int nb = std::max(1, options.counter_buckets);
    const double bucket = total > 0 ? total / nb : 1.0;
    std::vector<double> hbm(static_cast<std::size_t>(nb), 0.0);
    std::vector<std::vector<double>> util(tracks.queues.size(),
                                          std::vector<double>(static_cast<std::size_t>(nb), 0.0));
    auto spread = [&](std::vector<double>& v, double lo, double hi, double amount) {
      if (amount == 0) return;
      const auto last = static_cast<std::ptrdiff_t>(nb) - 1;
      auto idx = [&](double t) {
        return std::clamp(static_cast<std::ptrdiff_t>(std::floor(t / bucket)), std::ptrdiff_t{0},
                          last);
      };
      if (hi <= lo) {
        v[static_cast<std::size_t>(idx(lo))] += amount;
        return;
      }
      const double rate = amount / (hi - lo);
      for (std::ptrdiff_t k = idx(lo); k <= idx(hi); ++k) {
        const double o = std::min(hi, static_cast<double>(k + 1) * bucket) -
                         std::max(lo, static_cast<double>(k) * bucket);
        if (o > 0) v[static_cast<std::size_t>(k)] += rate * o;
      }
    };

    detail::CostReplay replay(*input.chip);
    for (std::size_t i = 0; i < n; ++i) {
      const isa::Instruction& inst = program.instructions[i];
      const sim::InstructionTime& time = result.times[i];
      const detail::Costs c = replay.next(inst);
      const std::size_t tid = tracks.of_instruction[i] + 1u;
      const double dur = std::max(0.0, time.occupied_until - time.start);
      const double stall = std::max(0.0, time.start - attr.queue_free[i]);
      if (c.dma)
        spread(hbm, time.start, std::max(time.start, time.end), static_cast<double>(c.hbm_bytes));
      spread(util[tid - 1], time.start, time.occupied_until, dur);

      // The flow into this instruction: from the signal that released it.
      if (options.flows && attr.released_by[i] >= 0) {
        sink.begin_event();
        fmt::format_to(out_it(),
                       "{{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"s{}\",\"cat\":\"semaphore\",\"id\":{"
                       "},\"pid\":{},\"tid\":{},\"ts\":",
                       attr.wait_sem[i], flow_base + i, pid, tid);
        us(b, time.start);
        b += '}';
      }
      sink.begin_event();
      b += "{\"ph\":\"X\",\"name\":";
      detail::json_string(b, isa::op_name(inst.op));
      fmt::format_to(out_it(), ",\"cat\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":",
                     isa::engine_name(inst.queue.engine), pid, tid);
      us(b, time.start);
      b += ",\"dur\":";
      us(b, dur);
      fmt::format_to(out_it(), ",\"args\":{{\"index\":{},\"op\":\"{}\",\"operands\":", i,
                     isa::op_name(inst.op));
      detail::json_string(b, isa::print_instruction(inst));
      b += ",\"dtype\":\"";
      b += dtype_of(inst);
      fmt::format_to(out_it(),
                     "\",\"bytes\":{},\"flops\":{},\"latency_ns\":{:.3f},\"stall_ns\":{:.3f}",
                     c.bytes, c.flops, time.end - time.start, stall);
      if (c.dma)
        fmt::format_to(out_it(), ",\"hbm_bytes\":{},\"descriptors\":{}", c.hbm_bytes,
                       c.descriptors);
      if (!inst.origin.file.empty() || inst.origin.line) {
        b += ",\"source\":";
        detail::json_string(b, fmt::format("{}:{}", inst.origin.file, inst.origin.line));
      }
      if (!inst.name.empty()) {
        b += ",\"label\":";
        detail::json_string(b, inst.name);
      }
      if (!inst.waits.empty()) {
        b += ",\"waits\":\"";
        for (std::size_t w = 0; w < inst.waits.size(); ++w)
          fmt::format_to(out_it(), "{}s{}>={}", w ? " " : "", inst.waits[w].sem,
                         inst.waits[w].value);
        b += '"';
      }
      if (attr.released_by[i] >= 0)
        fmt::format_to(out_it(), ",\"released_by\":{}", attr.released_by[i]);
      b += "}}";
      // Flows out of this instruction's signal, one per instruction it released; placed at the
      // end of the slice (the signal fires at or after it).
      if (options.flows)
        for (std::uint32_t k = rel_offsets[i]; k < rel_offsets[i + 1]; ++k) {
          sink.begin_event();
          fmt::format_to(out_it(),
                         "{{\"ph\":\"s\",\"name\":\"s{}\",\"cat\":\"semaphore\",\"id\":{},\"pid\":{"
                         "},\"tid\":{},\"ts\":",
                         attr.wait_sem[rel_targets[k]], flow_base + rel_targets[k], pid, tid);
          us(b, time.start + dur);
          b += '}';
        }
    }
    flow_base += n;

    // Counters: HBM bandwidth and per-track utilisation, one sample per bucket.
    for (int k = 0; k < nb; ++k) {
      const auto kk = static_cast<std::size_t>(k);
      sink.begin_event();
      fmt::format_to(out_it(), "{{\"ph\":\"C\",\"name\":\"HBM bandwidth\",\"pid\":{},\"ts\":", pid);
      us(b, k * bucket);
      fmt::format_to(out_it(), ",\"args\":{{\"GB/s\":{:.3f}}}}}", hbm[kk] / bucket);
      sink.begin_event();
      fmt::format_to(out_it(), "{{\"ph\":\"C\",\"name\":\"utilisation %\",\"pid\":{},\"ts\":", pid);
      us(b, k * bucket);
      b += ",\"args\":{";
      for (std::size_t t = 0; t < tracks.queues.size(); ++t)
        fmt::format_to(out_it(), "{}\"{}\":{:.2f}", t ? "," : "",
                       detail::queue_name(tracks.queues[t]),
                       std::min(100.0, 100.0 * util[t][kk] / bucket));
      b += "}}";
    }
  }
  b += "\n]}\n";
  sink.flush();
}

}  // namespace trnsim::profile
