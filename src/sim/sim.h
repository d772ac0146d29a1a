// Functional simulator of a NeuronCore: device memory, per-core state and the event loop
// that runs an isa::Program.
//
// One event loop serves both the functional simulation (this layer computes the bits) and
// the timing model (which plugs in a CostModel): instructions start when their queue is free
// and their semaphore waits hold, and signal at completion. Full semantics, numeric rules of
// the tensor engine, the hazard detector and the uninitialised-memory policy are described
// in docs/simulator.md.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "arch/arch.h"
#include "isa/isa.h"
#include "sim/operand_io.h"
#include "util/progress.h"

namespace trnsim::sim {

// ---------------------------------------------------------------------------------------
// Errors

// A simulation error: a bad program (validation, bounds, uninitialised read, deadlock) or a
// bad host request (HBM access outside an allocation). When it concerns an instruction,
// index/op/origin name it and what() is "k.s:40:3: error: instruction 12 (nc_matmul): why",
// with `note:` lines for the other places involved (the instructions blocked in a deadlock).
class SimError : public util::Error {
 public:
  explicit SimError(std::string why);              // not tied to an instruction
  explicit SimError(util::Diagnostic diagnostic);  // e.g. a race found by the hazard detector
  SimError(std::size_t index, std::string op, isa::Origin origin, std::string why,
           std::vector<util::Note> notes = {});
  // The same error attributed to physical core `core` of a multi-core run (run_cores): the
  // message starts "core 3: ".
  SimError(int core, const SimError& inner);
  bool has_instruction() const { return index_.has_value(); }
  bool has_core() const { return core_.has_value(); }
  int core() const { return core_.value_or(0); }
  std::size_t index() const { return index_.value_or(0); }
  const std::string& op() const { return op_; }
  const isa::Origin& origin() const { return diagnostics().front().where; }
  const std::string& why() const { return why_; }

 private:
  std::optional<std::size_t> index_;
  std::optional<int> core_;
  std::string op_;
  std::string why_;
};

// ---------------------------------------------------------------------------------------
// Device and core state

class OnChipMemory;  // sim/memory.h
class Hbm;           // sim/memory.h

// One NeuronCore's architectural state.
class Core {
 public:
  Core(const arch::ChipConfig& chip, int index);
  ~Core();
  Core(Core&&) noexcept;
  Core& operator=(Core&&) noexcept;

  int index() const { return index_; }
  OnChipMemory& sbuf() { return *sbuf_; }
  OnChipMemory& psum() { return *psum_; }
  const OnChipMemory& sbuf() const { return *sbuf_; }
  const OnChipMemory& psum() const { return *psum_; }

  // Host-side access to SBUF/PSUM (tests, debugging): bytes [offset, offset + size) of one
  // partition. Writing marks the bytes initialised; reading never fails (poison shows).
  void write_onchip(isa::Memory memory, std::uint32_t partition, std::uint64_t offset,
                    std::span<const std::uint8_t> bytes);
  std::vector<std::uint8_t> read_onchip(isa::Memory memory, std::uint32_t partition,
                                        std::uint64_t offset, std::uint64_t size) const;

  std::array<std::uint32_t, isa::kNumSemaphores>& semaphores() { return semaphores_; }
  // XORWOW generators of one engine lane: 6 words each (x, y, z, w, v, d), one generator
  // per GpSimd lane and four per gen4 Vector lane.
  std::span<std::uint32_t> rng_state(isa::Engine engine, std::uint32_t partition);
  // Re-seeds every lane of one engine's generators (nisa.set_rng_seed).
  void seed_rng(isa::Engine engine, std::uint32_t seed);
  // The Vector engine's accumulator register of one lane (tensor_scalar_cumulative's
  // reduce_cmd carries it from one instruction to the next).
  float& vector_accumulator(std::uint32_t partition);
  // At run start: both engines' generators from the program seed, accumulators zero.
  void reset_engine_state(std::uint32_t seed);

 private:
  int index_ = 0;
  std::unique_ptr<OnChipMemory> sbuf_, psum_;
  std::array<std::uint32_t, isa::kNumSemaphores> semaphores_{};
  std::uint32_t vector_generators_ = 1;
  std::vector<std::uint32_t> vector_rng_, gpsimd_rng_;
  std::vector<float> vector_accumulators_;
};

// A device: chip config, HBM shared by its cores, and the cores. HBM is a byte-addressed
// space of the configured capacity, but only allocations are backed by host memory; every
// access outside an allocation is an error.
class Device {
 public:
  explicit Device(arch::ChipConfig chip, int num_cores = 1);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const arch::ChipConfig& chip() const { return chip_; }
  std::uint64_t hbm_capacity() const;

  // First-fit allocation of `bytes` aligned to `align` (a power of two); returns the address.
  std::uint64_t allocate(std::uint64_t bytes, std::uint64_t align = 64);
  // Allocation at a fixed address (assembly files name absolute HBM addresses).
  void allocate_at(std::uint64_t address, std::uint64_t bytes);
  void free(std::uint64_t address);  // address returned by allocate / given to allocate_at
  // Host writes mark the bytes initialised; reads return whatever is there (poison if never
  // written). Both must stay inside one allocation.
  void write(std::uint64_t address, std::span<const std::uint8_t> bytes);
  void read(std::uint64_t address, std::span<std::uint8_t> out) const;
  std::vector<std::uint8_t> read(std::uint64_t address, std::uint64_t size) const;
  bool is_initialized(std::uint64_t address, std::uint64_t size) const;

  int num_cores() const { return static_cast<int>(cores_.size()); }
  Core& core(int index) { return cores_.at(static_cast<std::size_t>(index)); }
  const Core& core(int index) const { return cores_.at(static_cast<std::size_t>(index)); }
  Hbm& hbm() { return *hbm_; }
  const Hbm& hbm() const { return *hbm_; }

 private:
  arch::ChipConfig chip_;
  std::unique_ptr<Hbm> hbm_;
  std::vector<Core> cores_;
};

// ---------------------------------------------------------------------------------------
// Cost hook (the timing model implements it; the functional simulator uses unit costs)

using Duration = double;  // nanoseconds in the timing model; abstract units otherwise

struct InstructionCost {
  Duration occupancy = 1;  // the queue may start its next instruction this long after start
  Duration latency = 1;    // signals fire (results visible) this long after start
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  // Called each time an instruction starts (once, unless a loop runs it again), in order of
  // start times; `index` is its position in the program and `start` the simulated time it
  // starts at (a model of shared resources, such as the DMA engines, reserves them from then
  // on). `index` is kResolved when `inst` is a run-time copy whose register-relative operands
  // were moved to where the registers put them: the model must read `inst` itself, not what
  // it prepared for the program's instruction.
  static constexpr std::size_t kResolved = static_cast<std::size_t>(-1);
  virtual InstructionCost cost(const isa::Instruction& inst, std::size_t index, Duration start) = 0;
  // Optional preparation during the event loop's one pass over the program before it runs,
  // so that the run does not read the (large) instructions again: begin_program(size), then
  // prepare(inst, index) for every instruction, then end_program(). The pass runs on several
  // threads: the program is cut into chunks of kPrepareChunk instructions (index /
  // kPrepareChunk); the instructions of one chunk are prepared in order by one thread,
  // different chunks concurrently, so prepare() may touch only per-index and per-chunk state.
  // end_program() runs alone once every chunk is done. The defaults do nothing.
  static constexpr unsigned kPrepareChunkShift = 16;
  static constexpr std::size_t kPrepareChunk = std::size_t{1} << kPrepareChunkShift;
  virtual void begin_program(std::size_t /*instructions*/) {}
  virtual void prepare(const isa::Instruction& /*inst*/, std::size_t /*index*/) {}
  virtual void end_program() {}
};

// Every instruction occupies its queue for one unit and completes after one unit.
class UnitCostModel final : public CostModel {
 public:
  InstructionCost cost(const isa::Instruction&, std::size_t, Duration) override { return {}; }
};

// ---------------------------------------------------------------------------------------
// Running a program

enum class UninitializedPolicy : std::uint8_t {
  kError,    // reading never-written SBUF/PSUM/HBM bytes is a SimError (default)
  kNanFill,  // such elements read as NaN (float types) or 4 (integer types), as NKI's simulator
  kIgnore,   // read the poison pattern (0xFF bytes) as it is
};

// What the program's author calls the data at a place: (physical core, memory, partition,
// byte offset inside the partition; for HBM the address and partition 0) -> a description
// such as "tile 'acc' (kernel.cpp:12:5)", or "" when it does not know. The runtime passes one
// built from the compiler's placements, so that an error names the tile, not just the byte.
using MemoryNamer = std::function<std::string(int core, isa::Memory memory, std::uint32_t partition,
                                              std::uint64_t byte)>;

// ---------------------------------------------------------------------------------------
// Collectives (isa::Collective): the simulator matches the calls; an engine the runtime
// supplies (built on src/collective and the launch's system) computes and times them.

// One rank's part in a collective whose every member has arrived.
struct CollectiveMember {
  int rank = 0;                         // its launch group (CoreProgram::group)
  const isa::Collective* op = nullptr;  // as this rank runs it (registers applied)
  // Functional runs: the bytes of src (and of src1 and metadata when the op has them), in
  // element order; and what the engine fills in.
  std::vector<std::uint8_t> src, src1, metadata;
  std::vector<std::uint8_t> dst;
  // The [begin, end) element ranges of dst the collective wrote, when not all of it (the -v
  // kinds write only what each rank sends; the rest of dst keeps its data).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> dst_written;
  // The metadata with the receive counts the collective wrote (empty: it wrote none).
  std::vector<std::uint8_t> metadata_out;
  Duration arrived = 0;  // when it reached the head of its queue
};

class CollectiveEngine {
 public:
  virtual ~CollectiveEngine() = default;
  // Runs one collective among `members` (in rank order; a replica group, or every rank of the
  // launch for a permute) of a launch of `ranks` ranks: fills each member's dst (functional
  // runs) and returns when each member's call completes (no earlier than the last arrival).
  // Throws std::invalid_argument for a call that cannot run (sizes that do not fit the group,
  // groups that leave out a rank); the simulator reports it at the instruction.
  virtual std::vector<Duration> run(std::span<CollectiveMember> members, int ranks,
                                    bool functional) = 0;
};

// The widest vector instructions the matmul contraction kernel uses (the rest of the
// simulator is compiled for the build's target, with a few run-time clones): the host's, or
// fewer when the environment's TRNSIM_SIMD (baseline, avx2, avx512; read once, other values
// ignored with a warning) or limit_simd asks, to measure or test the narrower ones. Every
// level gives the same bits (docs/simulator.md).
enum class SimdLevel : std::uint8_t { kBaseline, kAvx2, kAvx512 };
SimdLevel simd_level();
std::string_view simd_level_name(SimdLevel level);  // "baseline", "avx2", "avx512"
// At most `level` from now on (never above the host's); nullopt: back to the default.
void limit_simd(std::optional<SimdLevel> level);

struct RunOptions {
  // A run keeps a record of each start of a program with loops (RunResult::executions, 32
  // bytes each, more with hazard checking), so the default stops at 16.8 million starts.
  static constexpr std::uint64_t kLoopStepLimit = std::uint64_t{1} << 24;
  bool check_hazards = true;
  UninitializedPolicy uninitialized = UninitializedPolicy::kError;
  bool functional = true;             // false: timing only, no data is read or computed
  std::optional<std::uint32_t> seed;  // overrides Program::seed
  // Instruction starts before giving up; 0 = no limit for a straight-line program, and
  // kLoopStepLimit for one with control flow (a loop that never ends must not hang the run).
  std::uint64_t max_steps = 0;
  CostModel* cost_model = nullptr;  // nullptr = UnitCostModel
  int core = 0;                     // which core of the device runs the program
  // false: skip isa::check_instruction in timing-only runs (functional = false), for a
  // program the caller already validated against this chip (e.g. compiled once, timed many
  // times). Semaphore indices are still checked; functional runs always validate.
  bool validate = true;
  // Host threads for the pass over the program before the run (validation, queues, the cost
  // model's preparation); 0 = one per hardware thread. The run itself is one event loop, and
  // results are the same bits for every thread count (docs/simulator.md).
  unsigned threads = 0;
  MemoryNamer name_memory;  // optional: names the data an uninitialised read touched
  // Runs the collectives (isa::Collective) of a multi-rank launch; without one a collective
  // is an error.
  CollectiveEngine* collectives = nullptr;
  // Optional: the run enters Phase::kSimulating with `total` its instructions, then counts
  // each completed one in `done`.
  util::Progress* progress = nullptr;
};

enum class HazardKind : std::uint8_t { kReadAfterWrite, kWriteAfterRead, kWriteAfterWrite };
std::string_view hazard_kind_name(HazardKind kind);  // "RAW", "WAR", "WAW"

// Two instructions on different queues touching overlapping bytes, at least one writing,
// with no semaphore path ordering them. `first` ran before `second` in this simulation.
struct Hazard {
  HazardKind kind = HazardKind::kReadAfterWrite;
  std::size_t first = 0, second = 0;  // instruction indices (each in its own core's program)
  // Physical cores of the two instructions: equal in a single-core run; in run_cores an HBM
  // race between two cores not ordered by a barrier has different cores.
  int first_core = 0, second_core = 0;
  std::string first_operand, second_operand;
  isa::Memory memory = isa::Memory::kSbuf;
  std::uint32_t partition_lo = 0, partition_hi = 0;  // overlap (SBUF/PSUM), [lo, hi)
  std::int64_t byte_lo = 0, byte_hi = 0;             // overlap: in-partition or HBM bytes
  // Located at the later access with a note at the earlier one; both instructions and the
  // overlap are named in its message. `message` is its text (util::format).
  util::Diagnostic diagnostic;
  std::string message;
};

struct InstructionTime {
  Duration start = 0, end = 0;  // end = start + latency (when its signals fired)
  Duration occupied_until = 0;  // start + occupancy (when its queue could start the next one)
};

struct QueueCount {
  isa::QueueId queue;
  std::uint64_t instructions = 0;  // started (a loop's instructions once per run)
};

// One start of an instruction in a program with control flow.
struct Execution {
  std::uint32_t index = 0;  // the instruction
  std::uint32_t run = 0;    // how many times it had started before (0 for the first)
  InstructionTime time;
};

struct RunResult {
  std::uint64_t instructions_executed = 0;
  std::vector<QueueCount> queues;  // in order of first appearance in the program
  std::vector<Hazard> hazards;     // capped at RunResult::kMaxHazards
  std::uint64_t hazards_suppressed = 0;
  std::vector<std::string> diagnostics;  // warnings and hazard messages, human-readable
  std::array<std::uint32_t, isa::kNumSemaphores> semaphores{};  // final values
  std::vector<InstructionTime> times;  // indexed like Program::instructions; a loop's last run
  // Programs with control flow (registers, branches): every start, in order of start. Empty
  // for straight-line programs, whose `times` say it all.
  std::vector<Execution> executions;
  // With `executions`: what the registers decided at each start, in order of start: the
  // targets of an instruction's register-relative waits, and the offsets its
  // register-relative operands ran at (in operand order). unroll() reads them.
  std::vector<std::int64_t> wait_targets;
  std::vector<std::uint64_t> moved_offsets;
  Duration end_time = 0;
  static constexpr std::size_t kMaxHazards = 1000;
};

// A run of a program with control flow as the straight-line program it amounted to: one
// instruction per start (RunResult::executions), in order of start, with its waits and
// operands as the registers made them at that start, named "name#k" for the k-th run of an
// instruction that ran more than once; `source` maps each back to its program index. What
// reads straight-line runs (the profiler) reads loops through it. The control operations
// stay in it (branch targets still name the original program): it is a record, not a
// program to run. A run without executions comes back as it is.
struct UnrolledRun {
  isa::Program program;
  RunResult result;
  std::vector<std::uint32_t> source;
};
UnrolledRun unroll(const isa::Program& program, const RunResult& result);

// Validates every instruction (isa::check_instruction; all violations in one SimError) and,
// for a program with control flow, every branch target and register (always, validating or
// not), then runs the program on core options.core. Throws SimError for validation failures, bounds
// errors, uninitialised reads (kError policy), deadlock, and step-limit exhaustion.
// A thin wrapper over the engine of run_cores with one launch; a core_barrier among more
// than one core is an error here ("needs a multi-core launch").
RunResult run(Device& device, const isa::Program& program, const RunOptions& options = {});

// One program on one physical core of a multi-core launch.
struct CoreProgram {
  int core = 0;  // physical core index on the device
  const isa::Program* program = nullptr;
  CostModel* cost_model = nullptr;  // nullptr = unit costs
  // The cores of one logical core (one rank of an SPMD launch) share a group: a core_barrier
  // joins only cores of its own group, so ranks running the same program do not meet.
  int group = 0;
};

struct MultiRunResult {
  std::vector<RunResult> cores;  // same order as the launches
  Duration end_time = 0;         // max over cores
};

// Runs several programs, one per physical core, in ONE event loop (deterministic order:
// time, then core, then queue, then index). Cores share the device's HBM. core_barrier
// instructions (isa::CoreBarrier{barrier_id, num_cores}) on the participating cores wait
// until num_cores cores of the same group (CoreProgram::group) have reached the barrier with
// that id (k-th arrival of an id across the group's cores forms generation k), then all
// proceed. RunOptions::core and RunOptions::cost_model
// are ignored (each launch names its own); max_steps bounds the instructions of all cores.
// Errors name the core ("core 3: instruction 12 (...): why"); a barrier that can never
// complete is a deadlock naming the cores that arrived and those missing.
MultiRunResult run_cores(Device& device, std::span<const CoreProgram> launches,
                         const RunOptions& options = {});

// ---------------------------------------------------------------------------------------
// Custom GpSimd operators (isa::CustomOp)

// `inputs` are the CustomOp's input operands decoded to fp32; `outputs` are pre-shaped like
// the output operands (values zero) and are encoded back into them after the call.
using CustomOpFn = std::function<void(std::span<const Tile> inputs, std::span<Tile> outputs,
                                      std::span<const float> params)>;
// GpSimd cycles of one call (used by the timing model when CustomOp::cost_cycles is 0).
using CustomOpCostFn = std::function<std::uint64_t(const isa::CustomOp& op)>;

struct CustomOpEntry {
  CustomOpFn fn;
  CustomOpCostFn cost;  // may be empty
};

// Process-wide registry; re-registering a name replaces it. Thread-safe.
void register_custom_op(const std::string& name, CustomOpFn fn, CustomOpCostFn cost = {});
void unregister_custom_op(const std::string& name);
std::optional<CustomOpEntry> find_custom_op(const std::string& name);

}  // namespace trnsim::sim
