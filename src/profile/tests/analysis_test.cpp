// Analysis on tiny hand-timed programs: utilisation, FLOPs, stall attribution to the right
// semaphore and queue, dependency kinds, metrics and the suggestion rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "profile/tests/helpers.h"

namespace trnsim::profile {
namespace {

using namespace testing;  // NOLINT

const StallBucket* bucket(const CoreProfile& c, const std::string& key) {
  for (const auto& b : c.stalls)
    if (b.key == key) return &b;
  return nullptr;
}
const TrackProfile* track(const CoreProfile& c, const std::string& name) {
  for (const auto& t : c.tracks)
    if (t.name == name) return &t;
  return nullptr;
}
const Suggestion* rule(const Analysis& a, const std::string& name) {
  for (const auto& s : a.suggestions)
    if (s.rule == name) return &s;
  return nullptr;
}

// dma.0 loads a small tile (s1), dma.1 a large one (s2); the matmul waits on both.
isa::Program two_loads_then_matmul() {
  isa::Program p;
  p.instructions.push_back(make(dma_q(0), load(0, 128, 128, 0), {}, {{1, 1}}, 10));
  p.instructions.push_back(make(dma_q(1), load(0x10000, 128, 4096, 1024), {}, {{2, 1}}, 11));
  p.instructions.push_back(
      make(tensor_q(), matmul(128, 128, 512, 0, 1024), {{1, 1}, {2, 1}}, {{3, 1}}, 12));
  p.instructions.push_back(make(
      vector_q(), copy(sbuf(DType::kFloat32, 128, 16384, 512), psum(DType::kFloat32, 128, 0, 512)),
      {{3, 1}}, {}, 13));
  return p;
}

TEST(ProfileAnalysis, MatmulCostsAndUtilisationByHand) {
  const auto run = run_timed(two_loads_then_matmul());
  const Analysis a = analyze(run->input());
  ASSERT_EQ(a.cores.size(), 1u);
  const CoreProfile& c = a.cores[0];
  ASSERT_EQ(c.instructions.size(), 4u);
  const InstructionProfile& mm = c.instructions[2];
  // trn3: max(min(MII=64, M=128), N=512) = 512 cycles at 2.4 GHz; LoadStationary 32 cycles hidden.
  EXPECT_NEAR(mm.occupied_until - mm.start, 512 / 2.4, 1e-6);
  EXPECT_DOUBLE_EQ(mm.flops, 2.0 * 128 * 128 * 512);
  EXPECT_EQ(mm.partitions, 128u);
  // Tracks in display order: tensor, vector, dma.0, dma.1.
  ASSERT_EQ(c.tracks.size(), 4u);
  EXPECT_EQ(c.tracks[0].name, "tensor");
  EXPECT_EQ(c.tracks[1].name, "vector");
  EXPECT_EQ(c.tracks[2].name, "dma.0");
  EXPECT_EQ(c.tracks[3].name, "dma.1");
  const double total = c.metrics.total_ns;
  EXPECT_DOUBLE_EQ(total, run->report.total_ns);
  EXPECT_NEAR(c.tracks[0].active_percent, 100.0 * (512 / 2.4) / total, 1e-9);
  // MFU = FLOPs / (peak x time), peak bf16 = 2 x 128 x 128 x 2.4 GHz.
  const double peak = 2.0 * 128 * 128 * 2.4e9;
  EXPECT_NEAR(c.metrics.peak_flops_per_s, peak, peak * 1e-12);
  EXPECT_NEAR(c.metrics.mfu_percent, 100.0 * mm.flops / (peak * total * 1e-9), 1e-9);
  EXPECT_DOUBLE_EQ(c.metrics.hfu_percent, c.metrics.mfu_percent);  // no transposes
  // DMA bytes: 128 x 128 + 128 x 4096 bf16, each read from HBM once.
  const std::uint64_t bytes = 2ull * 128 * 128 + 2ull * 128 * 4096;
  EXPECT_EQ(c.metrics.dma_bytes, bytes);
  EXPECT_EQ(c.metrics.hbm_bytes, bytes);
  EXPECT_EQ(c.metrics.dma_transfers, 2u);
  EXPECT_DOUBLE_EQ(c.metrics.average_dma_size, bytes / 2.0);
  EXPECT_NEAR(c.metrics.mbu_percent,
              100.0 * bytes / (run->chip.hbm.bandwidth_gbps / run->chip.cores_per_chip * total),
              1e-9);
  EXPECT_NEAR(c.metrics.mm_arithmetic_intensity, mm.flops / bytes, 1e-9);
  // Both loads run at once from t = 0, so DMA is active until the larger one ends.
  EXPECT_NEAR(c.metrics.dma_active_time_percent, 100.0 * run->result.times[1].end / total, 1e-9);
}

TEST(ProfileAnalysis, StallIsAttributedToTheSemaphoreSatisfiedLast) {
  const auto run = run_timed(two_loads_then_matmul());
  const Analysis a = analyze(run->input());
  const CoreProfile& c = a.cores[0];
  const auto& t = run->result.times;
  ASSERT_LT(t[0].end, t[1].end);  // the small load finishes first
  const InstructionProfile& mm = c.instructions[2];
  EXPECT_NEAR(mm.stall_ns, t[2].start, 1e-9);  // the tensor queue was free from 0
  EXPECT_EQ(mm.cause, StallCause::kDma);
  EXPECT_EQ(mm.wait_sem, 2);
  EXPECT_EQ(mm.released_by, 1);
  EXPECT_EQ(c.tracks[mm.released_track].name, "dma.1");
  // The vector copy waited on the matmul's s3: an engine stall.
  const InstructionProfile& cp = c.instructions[3];
  EXPECT_EQ(cp.cause, StallCause::kEngine);
  EXPECT_EQ(cp.wait_sem, 3);
  EXPECT_EQ(cp.released_by, 2);
  EXPECT_NEAR(cp.stall_ns, t[3].start, 1e-9);
  // Breakdown: by semaphore and by releasing queue.
  ASSERT_NE(bucket(c, "s2"), nullptr);
  EXPECT_NEAR(bucket(c, "s2")->ns, mm.stall_ns, 1e-9);
  EXPECT_EQ(bucket(c, "s1"), nullptr);  // satisfied earlier, never the last
  ASSERT_NE(bucket(c, "dma.1"), nullptr);
  EXPECT_EQ(bucket(c, "vector"), nullptr);  // the vector copy released nothing
  ASSERT_NE(bucket(c, "tensor"), nullptr);
  EXPECT_NEAR(bucket(c, "tensor")->ns, cp.stall_ns, 1e-9);
  // Track stall totals agree with the timing model's statistics.
  for (const auto& q : run->report.queues) {
    const std::string name = q.queue.engine == isa::Engine::kDma
                                 ? "dma." + std::to_string(q.queue.index)
                                 : std::string(isa::engine_name(q.queue.engine));
    ASSERT_NE(track(c, name), nullptr) << name;
    EXPECT_NEAR(track(c, name)->stalled_ns, q.stalled_ns, 1e-6) << name;
    EXPECT_NEAR(track(c, name)->busy_ns, q.busy_ns, 1e-6) << name;
  }
  // The matmul's one wait is at pipeline fill, which no prefetch can hide: no advice.
  EXPECT_EQ(rule(a, "dma_wait"), nullptr);
}

// Two loads from one source line (a loop over queues) feed two matmuls of one line; vector and
// scalar copies wait on the loads too, and a last copy waits on the second matmul. Three
// queues wait for the same transfers at once, so their stalls add up past the run's length.
isa::Program parallel_waits_on_one_load_line() {
  isa::Program p;
  p.instructions.push_back(make(dma_q(0), load(0, 128, 2048, 0), {}, {{1, 1}}, 10));
  p.instructions.push_back(make(dma_q(1), load(0x100000, 128, 2048, 4096), {}, {{2, 1}}, 10));
  p.instructions.push_back(
      make(tensor_q(), matmul(128, 128, 512, 0, 1024), {{1, 1}}, {{3, 1}}, 20));
  p.instructions.push_back(
      make(tensor_q(), matmul(128, 128, 512, 4096, 5120), {{2, 1}}, {{3, 1}}, 20));
  p.instructions.push_back(
      make(vector_q(),
           copy(sbuf(DType::kFloat32, 128, 16384, 64), sbuf(DType::kFloat32, 128, 20480, 64)),
           {{1, 1}}, {}, 21));
  p.instructions.push_back(
      make(scalar_q(),
           copy(sbuf(DType::kFloat32, 128, 24576, 64), sbuf(DType::kFloat32, 128, 28672, 64)),
           {{2, 1}}, {}, 22));
  p.instructions.push_back(make(
      vector_q(), copy(sbuf(DType::kFloat32, 128, 16384, 512), psum(DType::kFloat32, 128, 0, 512)),
      {{3, 2}}, {}, 23));
  return p;
}

const StallLinePair* line_pair(const Analysis& a, std::uint32_t waiting_line,
                               std::uint32_t releasing_line) {
  for (const auto& p : a.cores[0].stall_lines)
    if (a.sources[p.waiting_source].line == waiting_line &&
        a.sources[p.releasing_source].line == releasing_line)
      return &p;
  return nullptr;
}

TEST(ProfileAnalysis, StallsAreNamedByTheWaitingAndTheReleasingSourceLines) {
  const auto run = run_timed(parallel_waits_on_one_load_line());
  const Analysis a = analyze(run->input());
  const CoreProfile& c = a.cores[0];
  const auto& t = run->result.times;
  // Each stall by hand: the start minus when its queue became free (0 for a queue's first).
  const double matmuls = t[2].start + (t[3].start - t[2].occupied_until);
  ASSERT_GT(t[3].start - t[2].occupied_until, 0);  // the second matmul waited for its load too
  const double vector_copy = t[4].start, scalar_copy = t[5].start;
  const double last_copy = t[6].start - t[4].occupied_until;

  ASSERT_EQ(c.stall_lines.size(), 4u);
  const StallLinePair* mm = line_pair(a, 20, 10);
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(a.sources[mm->waiting_source].file, "k.s");
  EXPECT_EQ(mm->cause, StallCause::kDma);
  EXPECT_NEAR(mm->ns, matmuls, 1e-9);
  EXPECT_EQ(mm->instructions, 2u);  // both matmuls: one pair for the loop's two semaphores
  EXPECT_EQ(mm->semaphores, (std::vector<std::int16_t>{1, 2}));
  ASSERT_EQ(mm->waiting_tracks.size(), 1u);
  EXPECT_EQ(c.tracks[mm->waiting_tracks[0]].name, "tensor");
  ASSERT_EQ(mm->releasing_tracks.size(), 2u);
  EXPECT_EQ(c.tracks[mm->releasing_tracks[0]].name, "dma.0");
  EXPECT_EQ(c.tracks[mm->releasing_tracks[1]].name, "dma.1");
  ASSERT_NE(line_pair(a, 21, 10), nullptr);
  EXPECT_NEAR(line_pair(a, 21, 10)->ns, vector_copy, 1e-9);
  ASSERT_NE(line_pair(a, 22, 10), nullptr);
  EXPECT_NEAR(line_pair(a, 22, 10)->ns, scalar_copy, 1e-9);
  const StallLinePair* copy = line_pair(a, 23, 20);  // released by the second matmul
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->cause, StallCause::kEngine);
  EXPECT_NEAR(copy->ns, last_copy, 1e-9);
  for (std::size_t k = 1; k < c.stall_lines.size(); ++k)
    EXPECT_GE(c.stall_lines[k - 1].ns, c.stall_lines[k].ns);

  // The case: stalls of parallel queues sum past the run, so shares are of the stall
  // total, which is the timing model's per-queue stall time summed.
  double queue_stalls = 0;
  for (const auto& q : run->report.queues) queue_stalls += q.stalled_ns;
  EXPECT_NEAR(c.metrics.stall_ns, queue_stalls, 1e-6);
  EXPECT_NEAR(c.metrics.stall_ns, matmuls + vector_copy + scalar_copy + last_copy, 1e-6);
  ASSERT_GT(c.metrics.stall_ns, c.metrics.total_ns);
  double pair_percent = 0;
  for (const auto& p : c.stall_lines) pair_percent += p.percent;
  EXPECT_NEAR(pair_percent, 100.0, 1e-9);
  EXPECT_NEAR(mm->percent, 100.0 * matmuls / c.metrics.stall_ns, 1e-9);
  double semaphore_percent = 0;
  for (const auto& b : c.stalls) {
    EXPECT_LE(b.percent, 100.0) << b.key;
    if (b.group == "semaphore") semaphore_percent += b.percent;
  }
  EXPECT_NEAR(semaphore_percent, 100.0, 1e-9);  // every stall here was released by a signal
  ASSERT_NE(bucket(c, "s1"), nullptr);
  EXPECT_NEAR(bucket(c, "s1")->percent, 100.0 * bucket(c, "s1")->ns / c.metrics.stall_ns, 1e-9);
}

// Every DMA queue runs on the same engines: no queue row claims their peak, the sum does.
TEST(ProfileAnalysis, DmaQueuesShareTheEnginesPeak) {
  const auto run = run_timed(parallel_waits_on_one_load_line());
  const Analysis a = analyze(run->input());
  const CoreProfile& c = a.cores[0];
  const double seconds = c.metrics.total_ns * 1e-9;
  double queues_sum = 0;
  int dma_queues = 0;
  for (const auto& tp : c.tracks) {
    if (tp.queue.engine != isa::Engine::kDma) continue;
    ++dma_queues;
    EXPECT_EQ(tp.peak_per_s, 0.0) << tp.name;
    EXPECT_EQ(tp.unit, "B/s");
    EXPECT_NEAR(tp.achieved_per_s, 2.0 * 128 * 2048 / seconds, 1e-3) << tp.name;
    queues_sum += tp.achieved_per_s;
  }
  EXPECT_EQ(dma_queues, 2);
  EXPECT_EQ(c.metrics.dma_engines, 16u);
  EXPECT_DOUBLE_EQ(c.metrics.dma_peak_bytes_per_s, run->report.dma_peak_bytes_per_s);
  EXPECT_NEAR(c.metrics.achieved_dma_bytes_per_s, queues_sum, 1e-3);
  EXPECT_NEAR(c.metrics.achieved_dma_bytes_per_s, run->report.achieved_dma_bytes_per_s, 1e-3);
  EXPECT_LT(c.metrics.achieved_dma_bytes_per_s, c.metrics.dma_peak_bytes_per_s);
}

// A second load the next matmul waits for, after the first: that wait could overlap compute.
TEST(ProfileSuggestions, DmaWaitsAfterPipelineFillAdvisePrefetching) {
  isa::Program p = two_loads_then_matmul();
  p.instructions.push_back(make(dma_q(1), load(0x200000, 128, 4096, 1024), {}, {{4, 1}}, 14));
  p.instructions.push_back(
      make(tensor_q(), matmul(128, 128, 512, 0, 1024), {{4, 1}}, {{5, 1}}, 15));
  const auto run = run_timed(p);
  const Analysis a = analyze(run->input());
  ASSERT_EQ(a.cores[0].instructions[5].cause, StallCause::kDma);
  const Suggestion* s = rule(a, "dma_wait");
  ASSERT_NE(s, nullptr);
  EXPECT_NE(s->title.find("dma.1"), std::string::npos) << s->title;
  EXPECT_NE(s->title.find("tensor"), std::string::npos) << s->title;
  EXPECT_EQ(s->source, "k.s:15");  // the second matmul, not the one at pipeline fill
  EXPECT_NE(s->detail.find("1 tensor instruction(s)"), std::string::npos) << s->detail;
}

TEST(ProfileAnalysis, BackToBackInstructionsHaveNoStall) {
  isa::Program p;
  for (int i = 0; i < 3; ++i)
    p.instructions.push_back(make(vector_q(), copy(sbuf(DType::kFloat32, 128, 0, 1024),
                                                   sbuf(DType::kFloat32, 128, 8192, 1024))));
  const auto run = run_timed(p);
  const Analysis a = analyze(run->input());
  for (const auto& ip : a.cores[0].instructions) {
    EXPECT_EQ(ip.stall_ns, 0.0);
    EXPECT_EQ(ip.cause, StallCause::kNone);
  }
  EXPECT_TRUE(a.cores[0].stalls.empty());
  // Busy back to back; the run ends when the last one's results are visible: the static
  // overhead (100 cycles at 1.2 GHz) after its occupancy (its 512-cycle stream hides the
  // access requests, docs/timing-model.md).
  const auto& t = run->result.times;
  const double occ = t[0].occupied_until - t[0].start;
  const double drain = 100 / 1.2;
  EXPECT_NEAR(t[2].end - t[2].occupied_until, drain, 1e-9);
  EXPECT_NEAR(a.cores[0].tracks[0].active_percent, 100.0 * 3 * occ / (3 * occ + drain), 1e-9);
  EXPECT_EQ(a.cores[0].metrics.bounding_engine, "vector");
}

TEST(ProfileAnalysis, DependencyKindsFromOperandFootprints) {
  isa::Program p;
  // 0: load into [0, 256) of every partition (write); 1: matmul reads it (flow via s1);
  // 2: vector overwrites the matmul's moving operand after the matmul (anti via s2);
  // 3: vector writes the same bytes again (output, queue order).
  p.instructions.push_back(make(dma_q(0), load(0, 128, 128, 0), {}, {{1, 1}}));
  p.instructions.push_back(make(tensor_q(), matmul(128, 128, 128, 0, 4096), {{1, 1}}, {{2, 1}}));
  p.instructions.push_back(
      make(vector_q(),
           copy(sbuf(DType::kBFloat16, 128, 4096, 128), sbuf(DType::kBFloat16, 128, 8192, 128)),
           {{2, 1}}));
  p.instructions.push_back(make(vector_q(), copy(sbuf(DType::kBFloat16, 128, 4096, 128),
                                                 sbuf(DType::kBFloat16, 128, 12288, 128))));
  // The matmul reads [4096, 4352) uninitialised: timing only, fine.
  const auto run = run_timed(p);
  const Analysis a = analyze(run->input());
  auto edge = [&](std::uint32_t from, std::uint32_t to) -> const Edge* {
    for (const auto& e : a.cores[0].edges)
      if (e.from == from && e.to == to) return &e;
    return nullptr;
  };
  ASSERT_NE(edge(0, 1), nullptr);
  EXPECT_EQ(edge(0, 1)->kinds, kDepFlow);
  EXPECT_TRUE(edge(0, 1)->semaphore);
  EXPECT_EQ(edge(0, 1)->sem, 1);
  ASSERT_NE(edge(1, 2), nullptr);
  EXPECT_EQ(edge(1, 2)->kinds, kDepAnti);
  ASSERT_NE(edge(2, 3), nullptr);
  EXPECT_EQ(edge(2, 3)->kinds, kDepOutput);
  EXPECT_FALSE(edge(2, 3)->semaphore);
  EXPECT_EQ(dependency_name(kDepFlow | kDepOutput), "flow+output");
  EXPECT_EQ(dependency_name(0), "order");
}

TEST(ProfileSuggestions, TinyInstructionsAndUnderusedPartitions) {
  isa::Program p;
  // 8 one-element copies: bound by the minimum initiation interval.
  for (int i = 0; i < 8; ++i)
    p.instructions.push_back(
        make(vector_q(), copy(sbuf(DType::kFloat32, 128, 0, 1), sbuf(DType::kFloat32, 128, 64, 1)),
             {}, {}, 20));
  // Large copies on 32 partitions on ScalarE.
  for (int i = 0; i < 4; ++i)
    p.instructions.push_back(
        make(scalar_q(),
             copy(sbuf(DType::kFloat32, 32, 4096, 8192), sbuf(DType::kFloat32, 32, 65536, 8192)),
             {}, {}, 30));
  const auto run = run_timed(p);
  const Analysis a = analyze(run->input());
  const Suggestion* tiny = rule(a, "tiny_instructions");
  ASSERT_NE(tiny, nullptr);
  EXPECT_EQ(tiny->source, "k.s:20");
  EXPECT_NE(tiny->title.find("8 tiny vector"), std::string::npos) << tiny->title;
  const Suggestion* parts = rule(a, "partitions");
  ASSERT_NE(parts, nullptr);
  EXPECT_EQ(parts->source, "k.s:30");
  EXPECT_NE(parts->title.find("32 of 128"), std::string::npos) << parts->title;
  EXPECT_EQ(rule(a, "dma_wait"), nullptr);
  // Per-source-line time sums the instructions' busy time.
  double line20 = 0;
  for (const auto& s : a.sources)
    if (s.line == 20) line20 = s.busy_ns;
  double sum = 0;
  for (const auto& ip : a.cores[0].instructions)
    if (ip.source && a.sources[ip.source].line == 20) sum += ip.occupied_until - ip.start;
  EXPECT_NEAR(line20, sum, 1e-9);
  EXPECT_GT(line20, 0);
}

TEST(ProfileSuggestions, SmallContiguousDmaRuns) {
  isa::Program p;
  // Each partition gathers 64 runs of 8 bf16 (16 B) spread 1 KiB apart in HBM.
  isa::DmaCopy d;
  d.dst = sbuf(DType::kBFloat16, 128, 0, 512);
  d.src = access_pattern(isa::Memory::kHbm, DType::kBFloat16, 0, 128, 0, {{512, 64}, {1, 8}}, 8);
  p.instructions.push_back(make(dma_q(0), d, {}, {}, 40));
  const auto run = run_timed(p);
  const Analysis a = analyze(run->input());
  EXPECT_LT(a.cores[0].instructions[0].min_contiguous_bytes, 512);
  const Suggestion* s = rule(a, "small_dma");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->source, "k.s:40");
  EXPECT_NE(s->detail.find("or use dma_transpose"), std::string::npos) << s->detail;
}

// The same advice for transfers that already are dma_transposes would be no advice.
TEST(ProfileSuggestions, SmallRunsOfADmaTransposeDoNotAdviseDmaTranspose) {
  isa::Program p;
  // The first 8 columns of an HBM [256, 16] bf16 matrix -> SBUF [8, 256]: 16-byte runs.
  isa::DmaTranspose d;
  d.dst = sbuf(DType::kBFloat16, 8, 0, 256);
  d.src = access_pattern(isa::Memory::kHbm, DType::kBFloat16, 0, 256, 0, {{1, 8}}, 16);
  p.instructions.push_back(make(dma_q(0), d, {}, {}, 41));
  const auto run = run_timed(p);
  const Analysis a = analyze(run->input());
  const Suggestion* s = rule(a, "small_dma");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->detail.find("use dma_transpose"), std::string::npos) << s->detail;
  EXPECT_NE(s->detail.find("nc_transpose"), std::string::npos) << s->detail;
}

TEST(ProfileSuggestions, PowerRampThrottling) {
  isa::Program p;
  for (int i = 0; i < 4; ++i)
    p.instructions.push_back(make(tensor_q(), matmul(128, 128, 512, 0, 1024), {}, {}, 50));
  const auto run = run_timed(p, /*ramp=*/true);
  ASSERT_GT(run->report.throttled_ns, 0);
  const Analysis a = analyze(run->input());
  EXPECT_DOUBLE_EQ(a.cores[0].metrics.throttled_ns, run->report.throttled_ns);
  const Suggestion* s = rule(a, "power_ramp");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->source, "k.s:50");
  // With the ramp off the rule stays silent.
  const auto flat = run_timed(p, false);
  EXPECT_EQ(rule(analyze(flat->input()), "power_ramp"), nullptr);
}

// Exponentials that keep VectorE busy are worth moving to ScalarE; the same work as plain
// copies is not an exponential problem.
TEST(ProfileSuggestions, VectorBoundExponentials) {
  auto program_of = [](bool exponential) {
    isa::Program p;
    for (int i = 0; i < 4; ++i) {
      const AccessPattern dst = sbuf(DType::kFloat32, 128, 0, 2048);
      const AccessPattern src = sbuf(DType::kFloat32, 128, 8192, 2048);
      isa::Operation op = copy(dst, src);
      if (exponential) {
        isa::Exponential e;
        e.dst = dst;
        e.src = src;
        op = e;
      }
      p.instructions.push_back(make(vector_q(), op, {}, {}, 60));
    }
    return p;
  };
  const auto run = run_timed(program_of(true));
  const Analysis a = analyze(run->input());
  const Suggestion* s = rule(a, "vector_exp");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->source, "k.s:60");
  EXPECT_GT(s->impact_ns, 0);
  const auto copies = run_timed(program_of(false));
  const Analysis b = analyze(copies->input());
  EXPECT_EQ(rule(b, "vector_exp"), nullptr);
}

// Every rule the profiler runs has its row in docs/profiler.md's suggestion table.
TEST(ProfileSuggestions, EveryRuleIsDocumented) {
  std::ifstream file(source_dir() + "/docs/profiler.md");
  ASSERT_TRUE(file) << "set TRNSIM_SOURCE_DIR";
  const std::string doc((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const std::vector<std::string_view> names = suggestion_rules();
  EXPECT_EQ(names.size(), 6u);
  for (std::string_view name : names)
    EXPECT_NE(doc.find("| `" + std::string(name) + "` |"), std::string::npos) << name;
}

TEST(ProfileAnalysis, SeveralCoresAreProfiledSideBySide) {
  const auto r0 = run_timed(two_loads_then_matmul());
  const auto r1 = run_timed(two_loads_then_matmul());
  ProfileInput in{
      &r0->chip,
      {{0, &r0->program, &r0->result, &r0->report}, {3, &r1->program, &r1->result, &r1->report}},
      "two"};
  const Analysis a = analyze(in);
  ASSERT_EQ(a.cores.size(), 2u);
  EXPECT_EQ(a.cores[1].core, 3);
  EXPECT_DOUBLE_EQ(a.cores[0].metrics.mfu_percent, a.cores[1].metrics.mfu_percent);
  // Source lines are shared: each line counts both cores' instructions.
  for (const auto& s : a.sources)
    if (s.line == 12) {
      EXPECT_EQ(s.instructions, 2u);
    }
}

TEST(ProfileAnalysis, RejectsRunsWithoutTimes) {
  const auto r = run_timed(two_loads_then_matmul());
  sim::RunResult empty;
  ProfileInput in{&r->chip, {{0, &r->program, &empty, nullptr}}, ""};
  EXPECT_THROW(analyze(in), std::invalid_argument);
}

TEST(ProfileAnalysis, ASendRecvWaitingForItsPeerIsABarrierStall) {
  // Core 0 reaches its sendrecv at once; core 1 only after a long vector op: core 0's DMA
  // queue waits for its peer, which the profile names.
  const arch::ChipConfig chip = arch::load_preset("trn3");
  isa::SendRecv x;
  x.src = sbuf(DType::kFloat32, 4, 0, 8);
  x.dst = sbuf(DType::kFloat32, 4, 256, 8);
  x.send_to = 1;
  x.recv_from = 1;
  isa::TensorCopy longer =
      copy(sbuf(DType::kFloat32, 128, 4096, 8192), sbuf(DType::kFloat32, 128, 40960, 8192));
  isa::Program p0, p1;
  p0.instructions.push_back(make(dma_q(0), x, {}, {}, 5));
  p1.instructions.push_back(make(vector_q(), longer, {}, {{0, 1}}, 9));
  x.send_to = x.recv_from = 0;
  p1.instructions.push_back(make(dma_q(0), x, {{0, 1}}, {}, 5));
  sim::Device device(chip, 2);
  sim::ChipTimingModel timing(chip, 2);
  const std::vector<sim::CoreProgram> launches = {{0, &p0, timing.core(0)},
                                                  {1, &p1, timing.core(1)}};
  const sim::MultiRunResult r =
      sim::run_cores(device, launches, sim::testing::timing_only_options());
  const sim::TimingReport t0 = timing.report(0, p0, r.cores[0]);
  const sim::TimingReport t1 = timing.report(1, p1, r.cores[1]);
  const Analysis a =
      analyze(ProfileInput{&chip, {{0, &p0, &r.cores[0], &t0}, {1, &p1, &r.cores[1], &t1}}, "x"});
  const double waited = r.cores[0].times[0].start;
  EXPECT_GT(waited, 1000.0);
  const auto& stalls = a.cores[0].stalls;
  const auto peer = std::find_if(stalls.begin(), stalls.end(),
                                 [](const StallBucket& b) { return b.key == "sendrecv peer"; });
  ASSERT_NE(peer, stalls.end());
  EXPECT_DOUBLE_EQ(peer->ns, waited);
  EXPECT_EQ(a.cores[0].instructions[0].cause, StallCause::kBarrier);
}

}  // namespace
}  // namespace trnsim::profile
