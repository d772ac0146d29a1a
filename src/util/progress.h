// What a long run is doing, for a progress display that another thread draws (the CLI's
// progress line on a terminal). The layers only store into it: relaxed atomics, no locks,
// no output, so a run without a display passes nullptr and pays nothing, and one with a
// display pays an atomic add per simulated instruction. Header-only: the bottom of the
// layer stack.
#pragma once

#include <atomic>
#include <cstdint>

namespace trnsim::util {

struct Progress {
  enum class Phase : std::uint8_t {
    kStarting,
    kTracing,
    kCompiling,
    kLoading,  // making the inputs and writing them to the simulated HBM
    kSimulating,
    kChecking,  // computing the reference and comparing
  };
  std::atomic<Phase> phase{Phase::kStarting};
  std::atomic<std::uint64_t> done{0};   // instructions simulated so far
  std::atomic<std::uint64_t> total{0};  // instructions to simulate (0 until compiled)

  void enter(Phase p) { phase.store(p, std::memory_order_relaxed); }
};

// `progress` (possibly nullptr) enters `phase`.
inline void enter(Progress* progress, Progress::Phase phase) {
  if (progress != nullptr) progress->enter(phase);
}

}  // namespace trnsim::util
