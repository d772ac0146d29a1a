// Profiling of simulated runs: what Neuron Explorer shows for a hardware trace, computed
// from one or several timed core runs (docs/profiler.md).
//
//   profile::ProfileInput input{&chip, {{0, &program, &result, &report}}, "my kernel"};
//   profile::Analysis a = profile::analyze(input);       // metrics, stalls, suggestions
//   profile::write_chrome_trace(input, trace_stream);     // Perfetto / chrome://tracing
//   profile::write_html_report(a, html_stream);           // the self-contained explorer
//
// Everything is computed post hoc from the program, the per-instruction times of the run
// (sim::RunResult::times) and the timing layer's formulas; nothing here changes a run.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "arch/arch.h"
#include "isa/isa.h"
#include "sim/sim.h"
#include "sim/timing_model.h"
#include "timing/timing.h"

namespace trnsim::profile {

// ---------------------------------------------------------------------------------------
// Input

// One timed core run. `timing` may be null (totals then come from the times alone).
struct CoreRun {
  int core = 0;  // physical core index (the trace's pid)
  const isa::Program* program = nullptr;
  const sim::RunResult* result = nullptr;  // must hold times for every instruction
  const sim::TimingReport* timing = nullptr;
};

struct ProfileInput {
  const arch::ChipConfig* chip = nullptr;
  std::vector<CoreRun> cores;
  std::string title;
};

// ---------------------------------------------------------------------------------------
// Analysis

// What an instruction waited for when its queue was free but it could not start.
enum class StallCause : std::uint8_t {
  kNone,        // started as soon as its queue was free
  kDma,         // a semaphore last released by a DMA queue's transfer
  kEngine,      // ... by a compute engine's instruction
  kBarrier,     // a core_barrier or a sendrecv waiting for other cores
  kUnresolved,  // a gap no semaphore release explains
};
std::string_view stall_cause_name(StallCause c);  // "none", "dma", "engine", ...

// Operand-footprint relation between a predecessor and an instruction (bit mask).
enum DependencyBits : std::uint8_t {
  kDepFlow = 1,    // predecessor writes bytes the instruction reads (RAW)
  kDepAnti = 2,    // predecessor reads bytes the instruction writes (WAR)
  kDepOutput = 4,  // both write the same bytes (WAW)
};
// "flow", "anti", "output" joined by '+', or "order" for 0 (synchronisation only).
std::string dependency_name(std::uint8_t bits);

// An ordering edge from `from` to `to` (instruction indices of one core): the previous
// instruction of the same queue, or the instruction whose signal released a wait of `to`.
struct Edge {
  std::uint32_t from = 0, to = 0;
  std::uint8_t kinds = 0;  // DependencyBits
  bool semaphore = false;  // true: a semaphore release; false: queue order
  std::int16_t sem = -1;   // the semaphore for a release edge
};

struct InstructionProfile {
  std::uint32_t index = 0;   // in the core's program (with loops: sim::unroll's program)
  std::uint16_t track = 0;   // index into CoreProfile::tracks
  std::uint16_t op = 0;      // index into Analysis::op_names
  std::uint32_t source = 0;  // index into Analysis::sources (0 = no origin)
  double start = 0, end = 0, occupied_until = 0;  // ns
  double flops = 0;                               // model FLOPs (matmul), 0 otherwise
  double transpose_flops = 0;                     // FLOPs the PE array spends on transposes
  std::uint64_t bytes = 0;  // compute: on-chip bytes read + written; DMA: transfer bytes
  std::uint64_t hbm_bytes = 0;
  std::uint64_t sbuf_bytes = 0, psum_bytes = 0;  // on-chip bytes touched by memory
  std::uint64_t descriptors = 0;                 // DMA only
  double min_contiguous_bytes = 0;               // DMA only
  std::uint32_t partitions = 0;                  // of the largest operand
  std::uint64_t elements = 0;                    // elements of the largest operand
  timing::Bound bound = timing::Bound::kNone;
  bool is_dma = false;
  // Stall attribution.
  double stall_ns = 0;  // start - when the queue became free
  StallCause cause = StallCause::kNone;
  std::int16_t wait_sem = -1;     // the semaphore satisfied last
  std::int64_t released_by = -1;  // instruction whose signal satisfied it (-1: none)
  std::uint16_t released_track = 0;
};

struct TrackProfile {
  isa::QueueId queue;
  std::string name;  // "tensor", "dma.3", ...
  std::uint64_t instructions = 0;
  double busy_ns = 0;     // sum of occupancies
  double stalled_ns = 0;  // sum of stall gaps
  double active_percent = 0;
  double flops = 0;
  std::uint64_t bytes = 0;
  std::uint64_t elements = 0;
  double achieved_per_s = 0;  // FLOP/s (tensor), elements/s (compute), bytes/s (DMA)
  // The engine's peak in the same unit; 0 = none. A DMA queue has none of its own: every
  // queue of a core shares the same DMA engines, whose peak is Metrics::dma_peak_bytes_per_s.
  double peak_per_s = 0;
  std::string unit;  // "FLOP/s", "elem/s", "B/s", ""
};

// Stall time of one core grouped by what released it.
struct StallBucket {
  std::string key;    // "s3", "dma.1", "vector", "barrier", "hbm", "unresolved"
  std::string group;  // "semaphore", "queue", "hbm", "other"
  double ns = 0;
  std::uint64_t instructions = 0;
  // Share of a meaningful whole, never of the run (stalls of parallel queues add up past it):
  // semaphore, queue and other buckets: of the core's stall time (Metrics::stall_ns);
  // hbm: of the DMA engines' time (run length x Metrics::dma_engines).
  double percent = 0;
};

// Stall time of one core grouped by the source line that waited and the source line whose
// signal released the wait (the semaphore satisfied last, InstructionProfile::released_by).
struct StallLinePair {
  std::uint32_t waiting_source = 0;      // index into Analysis::sources (0 = no origin)
  std::uint32_t releasing_source = 0;    // 0 = no origin, or nothing released it (barrier...)
  StallCause cause = StallCause::kNone;  // kDma, kEngine (a release), kBarrier, kUnresolved
  double ns = 0;
  std::uint64_t instructions = 0;
  double percent = 0;  // of the core's stall time (Metrics::stall_ns): the list sums to 100
  // Details, each sorted and distinct: the semaphores that released the waits, the waiting
  // and releasing queues (indices into CoreProfile::tracks).
  std::vector<std::int16_t> semaphores;
  std::vector<std::uint16_t> waiting_tracks, releasing_tracks;
};

struct SourceLine {
  std::string file;
  std::uint32_t line = 0;
  double busy_ns = 0, stall_ns = 0;
  double flops = 0;
  std::uint64_t instructions = 0;
  std::string code;  // the line's text, trimmed ("" when the file cannot be read)
};

// Counters over time: `buckets` equal intervals of the core's run.
struct Counters {
  double bucket_ns = 0;
  std::vector<double> hbm_bytes_per_s;          // per bucket
  std::vector<std::vector<double>> track_util;  // [track][bucket] busy fraction 0..1
  std::vector<double> sbuf_bytes, psum_bytes;   // touched per bucket
};

struct Metrics {
  double total_ns = 0;
  std::string tensor_mode;
  double model_flops = 0, transpose_flops = 0;
  double peak_flops_per_s = 0;
  double achieved_flops_per_s = 0;
  double mfu_percent = 0;  // model FLOPs / (peak x time)
  double hfu_percent = 0;  // (model + transpose FLOPs) / (peak x time)
  std::uint64_t hbm_bytes = 0, dma_bytes = 0;
  double hbm_bandwidth_bytes_per_s = 0;  // the core's share
  double achieved_hbm_bytes_per_s = 0;
  double mbu_percent = 0;              // HBM bytes / (bandwidth share x time)
  double dma_active_time_percent = 0;  // some transfer in flight
  double average_dma_size = 0;         // bytes per DMA instruction
  std::uint64_t dma_transfers = 0;
  // DMA over all queues: the queues share the core's DMA engines, so only their sum has a peak.
  std::uint32_t dma_engines = 0;
  double dma_peak_bytes_per_s = 0;      // engines x engine rate
  double achieved_dma_bytes_per_s = 0;  // transfer bytes of every queue / time
  double mm_arithmetic_intensity = 0;   // tensor FLOPs per HBM byte
  double peak_flops_bandwidth_ratio = 0;
  double throttled_ns = 0;
  double hbm_limited_ns = 0;
  // Stall time of the core's instructions summed over its queues: up to (queues x total_ns),
  // so it is the whole that stall shares are taken of, not total_ns.
  double stall_ns = 0;
  std::uint64_t sb_read_bytes = 0, sb_write_bytes = 0;
  std::uint64_t psum_read_bytes = 0, psum_write_bytes = 0;
  std::string bounding_engine;  // track name with the highest active time ("dma" for DMA)
  double bounding_active_percent = 0;
};

struct CoreProfile {
  int core = 0;
  std::vector<TrackProfile> tracks;
  std::vector<InstructionProfile> instructions;  // program order
  std::vector<Edge> edges;                       // sorted by `to`
  std::vector<StallBucket> stalls;               // sorted by ns, descending
  std::vector<StallLinePair> stall_lines;        // sorted by ns, descending
  Metrics metrics;
  Counters counters;
};

struct Suggestion {
  std::string rule;  // "dma_wait", "tiny_instructions", "partitions", "small_dma",
                     // "vector_exp", "power_ramp"
  std::string title;
  std::string detail;  // with the run's numbers
  int core = 0;
  std::string source;    // "file:line" of the instruction most concerned ("" if unknown)
  double impact_ns = 0;  // time the rule concerns (for ordering)
};

struct Analysis {
  std::string title;
  std::string chip;
  double total_ns = 0;  // max over cores
  std::vector<CoreProfile> cores;
  std::vector<std::string> op_names;  // interned mnemonics
  std::vector<SourceLine> sources;    // [0] = no origin; time summed over cores
  std::vector<Suggestion> suggestions;
  // Mnemonic, operands and label of each instruction for the explorer; empty when the
  // analysis was asked not to keep them (AnalyzeOptions::keep_text).
  std::vector<std::vector<std::string>> text;  // [core][instruction] operand text
};

struct AnalyzeOptions {
  int counter_buckets = 200;
  bool keep_text = true;  // keep each instruction's printed assembly for the explorer
  // Read each source file once to show its lines' code (SourceLine::code) in the explorer.
  bool read_source_code = true;
};

Analysis analyze(const ProfileInput& input, const AnalyzeOptions& options = {});

// The suggestion rules of docs/profiler.md over an analysis (analyze() already calls it).
std::vector<Suggestion> suggest(const Analysis& analysis);
// The names of the suggestion rules (Suggestion::rule), in the order they run.
std::vector<std::string_view> suggestion_rules();

// ---------------------------------------------------------------------------------------
// Chrome trace-event JSON (ui.perfetto.dev, chrome://tracing)

struct TraceOptions {
  int counter_buckets = 200;
  bool flows = true;
};
// Streams the trace: one process per core, one thread per queue, "X" slices, counters and
// signal -> released-instruction flows. Memory use is O(instructions) numbers, never the
// events themselves.
void write_chrome_trace(const ProfileInput& input, std::ostream& out,
                        const TraceOptions& options = {});

// ---------------------------------------------------------------------------------------
// Explorer (self-contained HTML)

struct HtmlOptions {
  std::string title;                         // overrides Analysis::title when set
  std::size_t max_instructions = 2'000'000;  // instructions embedded per core
};
void write_html_report(const Analysis& analysis, std::ostream& out,
                       const HtmlOptions& options = {});
void write_html_comparison(const Analysis& before, const Analysis& after, std::ostream& out,
                           const HtmlOptions& options = {});

// ---------------------------------------------------------------------------------------
// One call for front ends (trnsim profile-asm, trnsim run --profile)

struct ReportFiles {
  std::string html;                       // explorer report path ("" = none)
  std::string trace;                      // Chrome trace path ("" = none)
  const ProfileInput* compare = nullptr;  // a second run: the HTML is a comparison
};
// Analyses `input`, writes the requested files and returns the analysis. Throws
// std::runtime_error naming a file that cannot be written.
Analysis write_profile(const ProfileInput& input, const ReportFiles& files,
                       const HtmlOptions& options = {});

}  // namespace trnsim::profile
