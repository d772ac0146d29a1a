// The runtime: host tensors, building a kernel (trace + compile) and launching it on a
// simulated device, functionally and in time.
//
// This is the layer a user (or the CLI, or the Python binding) calls: give it a kernel
// callable, input specs and host data, get outputs and a timing report back.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "arch/arch.h"
#include "compiler/compiler.h"
#include "kernel/kernel.h"
#include "sim/sim.h"
#include "sim/timing_model.h"
#include "system/system.h"

namespace trnsim::runtime {

using numerics::DType;

// A dense row-major host array of storage words (x4-packed types: one word per 4 values).
//
// A deferred tensor (random_tensor, HostTensor::deferred) holds only its recipe until its
// contents are first asked for (bytes(), to_floats()): a timing-only launch never asks, so
// timing a large kernel does not spend its host time and memory on inputs it does not
// compute with. The values are the same whenever they are generated; copies share them once
// generated.
class HostTensor {
 public:
  std::string name;
  DType dtype = DType::kFloat32;
  kernel::Shape shape;

  HostTensor() = default;
  HostTensor(std::string name, DType dtype, kernel::Shape shape, std::vector<std::uint8_t> bytes);
  // A tensor of zero bytes.
  static HostTensor zeros(std::string name, DType dtype, kernel::Shape shape);
  // Values rounded to nearest even into dtype (not for x4-packed types).
  static HostTensor from_floats(std::string name, DType dtype, kernel::Shape shape,
                                std::span<const float> values);
  // Contents made by `make` on first access; it must return byte_size() bytes (checked) and
  // give the same bytes every time. Throws std::invalid_argument for a shape with a negative
  // dim or more than 2^63 elements.
  static HostTensor deferred(std::string name, DType dtype, kernel::Shape shape,
                             std::function<std::vector<std::uint8_t>()> make);

  std::int64_t words() const;     // product of shape
  std::size_t byte_size() const;  // words() x storage bytes of dtype (generates nothing)
  // Bytes the contents hold (a deferred tensor: as its recipe will generate them, which
  // differs from byte_size() if the shape or dtype was changed after random_tensor).
  std::size_t stored_size() const;
  bool generated() const { return deferred_ == nullptr || deferred_->ready; }
  // The contents (generated now if deferred; safe to call from several threads).
  const std::vector<std::uint8_t>& bytes() const;
  // The contents for editing: this tensor gets its own copy.
  std::vector<std::uint8_t>& mutable_bytes();
  // Decoded values (x4-packed types: the raw element values, no MX scale, 4 per word).
  std::vector<float> to_floats() const;
  kernel::TensorSpec spec() const { return {name, dtype, shape}; }

 private:
  // The recipe, run once and shared by the copies.
  struct Deferred {
    std::function<std::vector<std::uint8_t>()> make;
    std::size_t bytes_made = 0;  // what `make` returns (the tensor's fields may be edited since)
    std::once_flag once;
    std::atomic<bool> ready{false};
    std::vector<std::uint8_t> bytes;
  };
  std::vector<std::uint8_t> bytes_;     // the contents, unless deferred_
  std::shared_ptr<Deferred> deferred_;  // contents not made yet (or shared)
};

// Uniform values in [lo, hi) from a counter-based generator: the same seed gives the same
// tensor on every machine and thread count. Generated on first access (see HostTensor).
HostTensor random_tensor(std::string name, DType dtype, kernel::Shape shape, std::uint32_t seed,
                         float lo = -1.0f, float hi = 1.0f);

struct BuildOptions {
  std::string name = "kernel";
  int lnc = 1;  // logical core size: programs (physical cores) per launch
  compiler::CompileOptions compile;
  util::Progress* progress = nullptr;  // optional: enters the tracing and compiling phases
};

struct BuiltKernel {
  std::vector<kernel::KernelIr> ir;  // one per program id
  compiler::CompiledKernel compiled;
  std::vector<kernel::TensorSpec> inputs;
  double trace_ms = 0;    // host time of tracing
  double compile_ms = 0;  // host time of compiling
};

// Traces and compiles; throws kernel::KernelError.
BuiltKernel build(const kernel::KernelFn& fn, std::span<const kernel::TensorSpec> inputs,
                  const arch::ChipConfig& chip, const BuildOptions& options = {});

struct LaunchOptions {
  bool functional = true;  // false: timing only, outputs are not computed
  bool timing = true;      // time the run with the timing model
  bool check_hazards = true;
  std::optional<bool> power_ramp;  // unset = the chip's default
  sim::UninitializedPolicy uninitialized = sim::UninitializedPolicy::kError;
  std::optional<std::uint32_t> seed;
  int first_core = 0;                  // physical core that runs program 0
  util::Progress* progress = nullptr;  // optional: the simulating phase and its instructions
  // Functional runs: read back the inputs the kernel writes (NKI's in-place arguments) into
  // LaunchResult::updated_inputs.
  bool read_back_written_inputs = false;
};

// What a device_print showed: its prefix, the program that printed, the values.
struct DevicePrint {
  std::string prefix;
  int program = 0;
  HostTensor values;
};

struct LaunchResult {
  std::vector<HostTensor> outputs;  // kernel return order (empty in timing-only runs)
  std::vector<DevicePrint> prints;  // functional runs: per program, in program order
  // Per input (argument order), its contents after the run when the kernel writes it and
  // LaunchOptions::read_back_written_inputs asked for it.
  std::vector<std::optional<HostTensor>> updated_inputs;
  std::vector<sim::RunResult> runs;       // per program id
  std::vector<sim::TimingReport> timing;  // per program id, when timed
  // The launch's totals over its cores (end time, FLOPs and HBM bytes against the launched
  // cores' and the chip's peaks) with each core's report: timed launches of several programs.
  std::optional<sim::ChipTimingReport> chip_timing;
  double simulated_ns = 0;  // end of the last core (timed runs)
  double host_seconds = 0;  // wall time of the simulation
};

// Runs a built kernel on a fresh device of `chip`. Inputs must match the kernel's input
// specs (name order, dtype, shape). Throws sim::SimError for run-time errors and
// std::invalid_argument for mismatched inputs.
LaunchResult launch(const BuiltKernel& kernel, const arch::ChipConfig& chip,
                    std::span<const HostTensor> inputs, const LaunchOptions& options = {});

// A collective a launch ran (nki.collectives in the kernel: every member's call, matched),
// as its engine timed it from the last member's arrival.
struct CollectiveRun {
  isa::CollectiveKind kind = isa::CollectiveKind::kAllReduce;
  std::string algorithm;    // "ring", "mesh", "rdh", "hier"
  std::string model;        // what timed it: "event", or "analytical" for the largest
  std::uint64_t bytes = 0;  // as nccom-test counts them (the whole buffer; one rank's for
                            // all_to_all and permute)
  int members = 0;
  double start_ns = 0, end_ns = 0;
};

// Several ranks of one kernel at once (SPMD), in one event loop on one device.
struct RanksResult {
  // Per rank: its outputs, prints, runs and timing (LaunchResult::chip_timing covers the
  // rank's own cores when it has several).
  std::vector<LaunchResult> ranks;
  // Every core of every rank together against the chip's peaks (timed launches of more
  // than one core).
  std::optional<sim::ChipTimingReport> chip_timing;
  // Per chip of a timed launch of more than one core: its cores against its peaks.
  std::vector<sim::ChipTimingReport> chips;
  std::vector<CollectiveRun> collectives;  // in the order they completed
  double simulated_ns = 0;                 // end of the last core of any rank
  double host_seconds = 0;
};

// Runs `inputs.size()` ranks of a built kernel at once: rank r runs the kernel's programs on
// physical cores first_core + r x programs onwards, with inputs[r] and HBM tensors of its own
// (r spans of the kernel's HBM footprint above rank 0's), and a core_barrier joins only the
// cores of its rank. All ranks share the chip's HBM bandwidth (one sim::ChipTimingModel).
// Throws std::invalid_argument when the ranks do not fit the chip's cores or HBM.
RanksResult launch_ranks(const BuiltKernel& kernel, const arch::ChipConfig& chip,
                         std::span<const std::vector<HostTensor>> inputs,
                         const LaunchOptions& options = {});

// Ranks of a kernel on the chips of a system (nki.collectives between them): rank r runs on
// chip r / ranks_per_chip (chips in the collective model's ring order), on the cores
// launch_ranks would give it there, each chip's cores sharing that chip's HBM bandwidth. The
// kernel's collectives are computed by src/collective and timed by its event model on the
// system (docs/collectives.md, "In kernels"). `ranks_per_chip` 0: as many as the chip's
// cores hold. Throws std::invalid_argument when the ranks do not fit the chips.
RanksResult launch_system(const BuiltKernel& kernel, const system::SystemConfig& system,
                          std::span<const std::vector<HostTensor>> inputs, int ranks_per_chip = 0,
                          const LaunchOptions& options = {});

}  // namespace trnsim::runtime
