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

// For each instruction, the instructions its signal released (CSR over released_by): the
// starts of the flow arrows.
struct Releases {
  std::vector<std::uint32_t> offsets, targets;
};
Releases releases_of(const detail::Attribution& attr, std::size_t n) {
  Releases r;
  r.offsets.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i)
    if (attr.released_by[i] >= 0) ++r.offsets[static_cast<std::size_t>(attr.released_by[i]) + 1];
  for (std::size_t i = 0; i < n; ++i) r.offsets[i + 1] += r.offsets[i];
  r.targets.resize(r.offsets[n]);
  std::vector<std::uint32_t> fill(r.offsets.begin(), r.offsets.end() - 1);
  for (std::size_t i = 0; i < n; ++i)
    if (attr.released_by[i] >= 0)
      r.targets[fill[static_cast<std::size_t>(attr.released_by[i])]++] =
          static_cast<std::uint32_t>(i);
  return r;
}

// Writes one core's events: its process and tracks, an event per instruction with the flows
// of its semaphores, and the counters.
class CoreTrace {
 public:
  CoreTrace(Sink& sink, const CoreRun& run, const arch::ChipConfig& chip,
            const TraceOptions& options, std::uint64_t flow_base)
      : sink_(sink),
        b_(sink.buf()),
        program_(*run.program),
        result_(*run.result),
        pid_(run.core),
        options_(options),
        flow_base_(flow_base),
        tracks_(detail::assign_tracks(program_)),
        attr_(detail::attribute_stalls(program_, result_, tracks_)),
        replay_(chip) {
    // Free what only the dependency analysis needs.
    attr_.wait_releasers = {};
    attr_.wait_sems = {};
    attr_.wait_offsets = {};
    const std::size_t n = program_.instructions.size();
    if (options.flows) releases_ = releases_of(attr_, n);
    double total = result_.end_time;
    for (const auto& t : result_.times) total = std::max(total, t.end);
    buckets_ = std::max(1, options.counter_buckets);
    bucket_ns_ = total > 0 ? total / buckets_ : 1.0;
    hbm_.assign(static_cast<std::size_t>(buckets_), 0.0);
    util_.assign(tracks_.queues.size(), std::vector<double>(static_cast<std::size_t>(buckets_)));
  }

  void write() {
    write_metadata();
    for (std::size_t i = 0; i < program_.instructions.size(); ++i) write_instruction(i);
    write_counters();
  }

 private:
  auto out() { return std::back_inserter(b_); }

  void write_metadata() {
    sink_.begin_event();
    fmt::format_to(out(),
                   "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"tid\":0,\"args\":{{"
                   "\"name\":\"core {}\"}}}}",
                   pid_, pid_);
    sink_.begin_event();
    fmt::format_to(out(),
                   "{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{},\"tid\":0,\"args\":{{"
                   "\"sort_index\":{}}}}}",
                   pid_, pid_);
    for (std::size_t t = 0; t < tracks_.queues.size(); ++t) {
      sink_.begin_event();
      fmt::format_to(out(),
                     "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},\"args\":{{"
                     "\"name\":\"{}\"}}}}",
                     pid_, t + 1, detail::queue_name(tracks_.queues[t]));
      sink_.begin_event();
      fmt::format_to(out(),
                     "{{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":{},\"tid\":{},\"args\":"
                     "{{\"sort_index\":{}}}}}",
                     pid_, t + 1, t + 1);
    }
  }

  void write_instruction(std::size_t i) {
    const isa::Instruction& inst = program_.instructions[i];
    const sim::InstructionTime& time = result_.times[i];
    const detail::Costs c = replay_.next(inst);
    const std::size_t tid = tracks_.of_instruction[i] + 1u;
    const double dur = std::max(0.0, time.occupied_until - time.start);
    const double stall = std::max(0.0, time.start - attr_.queue_free[i]);
    // The slice in the trace's whole nanoseconds: its start and its end are rounded, not its
    // start and its duration, so consecutive slices on a track nest instead of overlapping.
    const double slice_start = std::round(time.start);
    const double slice_dur = std::max(0.0, std::round(time.occupied_until) - slice_start);
    if (c.dma)
      detail::spread(hbm_, bucket_ns_, time.start, std::max(time.start, time.end),
                     static_cast<double>(c.hbm_bytes));
    detail::spread(util_[tid - 1], bucket_ns_, time.start, time.occupied_until, dur);

    // The flow into this instruction: from the signal that released it.
    if (options_.flows && attr_.released_by[i] >= 0) {
      sink_.begin_event();
      fmt::format_to(out(),
                     "{{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"s{}\",\"cat\":\"semaphore\",\"id\":{"
                     "},\"pid\":{},\"tid\":{},\"ts\":",
                     attr_.wait_sem[i], flow_base_ + i, pid_, tid);
      us(b_, slice_start);
      b_ += '}';
    }
    sink_.begin_event();
    b_ += "{\"ph\":\"X\",\"name\":";
    detail::json_string(b_, isa::op_name(inst.op));
    fmt::format_to(out(), ",\"cat\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":",
                   isa::engine_name(inst.queue.engine), pid_, tid);
    us(b_, slice_start);
    b_ += ",\"dur\":";
    us(b_, slice_dur);
    write_args(i, c, time, stall);
    b_ += '}';
    // Flows out of this instruction's signal, one per instruction it released; placed at the
    // end of the slice (the signal fires at or after it).
    if (options_.flows)
      for (std::uint32_t k = releases_.offsets[i]; k < releases_.offsets[i + 1]; ++k) {
        const std::uint32_t target = releases_.targets[k];
        sink_.begin_event();
        fmt::format_to(out(),
                       "{{\"ph\":\"s\",\"name\":\"s{}\",\"cat\":\"semaphore\",\"id\":{},\"pid\":{"
                       "},\"tid\":{},\"ts\":",
                       attr_.wait_sem[target], flow_base_ + target, pid_, tid);
        us(b_, slice_start + slice_dur);
        b_ += '}';
      }
  }

  void write_args(std::size_t i, const detail::Costs& c, const sim::InstructionTime& time,
                  double stall) {
    const isa::Instruction& inst = program_.instructions[i];
    fmt::format_to(out(), ",\"args\":{{\"index\":{},\"op\":\"{}\",\"operands\":", i,
                   isa::op_name(inst.op));
    detail::json_string(b_, isa::print_instruction(inst));
    b_ += ",\"dtype\":\"";
    b_ += dtype_of(inst);
    fmt::format_to(out(), "\",\"bytes\":{},\"flops\":{},\"latency_ns\":{:.3f},\"stall_ns\":{:.3f}",
                   c.bytes, c.flops, time.end - time.start, stall);
    if (c.dma)
      fmt::format_to(out(), ",\"hbm_bytes\":{},\"descriptors\":{}", c.hbm_bytes, c.descriptors);
    if (inst.origin.known()) {
      b_ += ",\"source\":";
      detail::json_string(b_, util::to_string({inst.origin.file, inst.origin.line, 0}));
    }
    if (!inst.name.empty()) {
      b_ += ",\"label\":";
      detail::json_string(b_, inst.name);
    }
    if (!inst.waits.empty()) {
      b_ += ",\"waits\":\"";
      for (std::size_t w = 0; w < inst.waits.size(); ++w)
        fmt::format_to(out(), "{}s{}>={}", w ? " " : "", inst.waits[w].sem, inst.waits[w].value);
      b_ += '"';
    }
    if (attr_.released_by[i] >= 0)
      fmt::format_to(out(), ",\"released_by\":{}", attr_.released_by[i]);
    b_ += '}';
  }

  // HBM bandwidth and per-track utilisation, one sample per bucket.
  void write_counters() {
    for (int k = 0; k < buckets_; ++k) {
      const auto kk = static_cast<std::size_t>(k);
      sink_.begin_event();
      fmt::format_to(out(), "{{\"ph\":\"C\",\"name\":\"HBM bandwidth\",\"pid\":{},\"ts\":", pid_);
      us(b_, k * bucket_ns_);
      fmt::format_to(out(), ",\"args\":{{\"GB/s\":{:.3f}}}}}", hbm_[kk] / bucket_ns_);
      sink_.begin_event();
      fmt::format_to(out(), "{{\"ph\":\"C\",\"name\":\"utilisation %\",\"pid\":{},\"ts\":", pid_);
      us(b_, k * bucket_ns_);
      b_ += ",\"args\":{";
      for (std::size_t t = 0; t < tracks_.queues.size(); ++t)
        fmt::format_to(out(), "{}\"{}\":{:.2f}", t ? "," : "",
                       detail::queue_name(tracks_.queues[t]),
                       std::min(100.0, 100.0 * util_[t][kk] / bucket_ns_));
      b_ += "}}";
    }
  }

  Sink& sink_;
  std::string& b_;
  const isa::Program& program_;
  const sim::RunResult& result_;
  int pid_;
  const TraceOptions& options_;
  std::uint64_t flow_base_;
  detail::Tracks tracks_;
  detail::Attribution attr_;
  detail::CostReplay replay_;
  Releases releases_;
  int buckets_ = 1;
  double bucket_ns_ = 1.0;
  std::vector<double> hbm_;                // bytes per bucket
  std::vector<std::vector<double>> util_;  // busy ns per track and bucket
};

}  // namespace

void write_chrome_trace(const ProfileInput& given, std::ostream& out, const TraceOptions& options) {
  if (!given.chip) throw std::invalid_argument("profile: ProfileInput::chip is null");
  const detail::StraightLine straight(given);
  const ProfileInput& input = straight.input();
  Sink sink(out);
  std::string& b = sink.buf();
  b += "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"trnsim profile\",\"title\":";
  detail::json_string(b, input.title);
  b += ",\"chip\":";
  detail::json_string(b, input.chip->name);
  b += "},\"traceEvents\":[\n";
  std::uint64_t flow_base = 0;
  for (const CoreRun& run : input.cores) {
    if (!run.program || !run.result)
      throw std::invalid_argument("profile: a CoreRun has no program or result");
    CoreTrace(sink, run, *input.chip, options, flow_base).write();
    flow_base += run.program->instructions.size();
  }
  b += "\n]}\n";
  sink.flush();
}

}  // namespace trnsim::profile
