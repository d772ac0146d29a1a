// sim::unroll: a run with control flow as the straight-line program it amounted to (sim.h).
#include <fmt/core.h>

#include <stdexcept>

#include "sim/sim.h"

namespace trnsim::sim {

namespace {

// Reads the values the run recorded, in order, and says so when they run out: a result that
// does not belong to the program.
template <class T>
class Recorded {
 public:
  Recorded(const std::vector<T>& values, const char* what) : values_(values), what_(what) {}
  T next() {
    if (at_ == values_.size())
      throw std::invalid_argument(
          fmt::format("unroll: the run recorded too few {} for its program", what_));
    return values_[at_++];
  }

 private:
  const std::vector<T>& values_;
  const char* what_;
  std::size_t at_ = 0;
};

}  // namespace

UnrolledRun unroll(const isa::Program& program, const RunResult& result) {
  UnrolledRun out;
  if (result.executions.empty()) {
    out.program = program;
    out.result = result;
    out.source.resize(program.instructions.size());
    for (std::uint32_t i = 0; i < out.source.size(); ++i) out.source[i] = i;
    return out;
  }
  std::vector<std::uint32_t> runs(program.instructions.size(), 0);
  for (const Execution& e : result.executions) {
    if (e.index >= runs.size())
      throw std::invalid_argument(fmt::format(
          "unroll: the run started instruction {} of a program of {}", e.index, runs.size()));
    ++runs[e.index];
  }
  out.program.seed = program.seed;
  out.program.hbm = program.hbm;
  out.program.instructions.reserve(result.executions.size());
  out.source.reserve(result.executions.size());
  out.result = result;
  out.result.executions.clear();
  out.result.wait_targets.clear();
  out.result.moved_offsets.clear();
  out.result.times.clear();
  out.result.times.reserve(result.executions.size());
  Recorded<std::int64_t> targets(result.wait_targets, "wait targets");
  Recorded<std::uint64_t> offsets(result.moved_offsets, "operand offsets");
  for (const Execution& e : result.executions) {
    isa::Instruction inst = program.instructions[e.index];
    for (isa::SemWait& w : inst.waits) {
      if (!w.base.present()) continue;
      const std::int64_t target = targets.next();
      // A target at or below 0 held at once; one above what a semaphore holds never did, and
      // the run would have stopped there.
      w.value = static_cast<std::uint32_t>(std::clamp<std::int64_t>(target, 0, UINT32_MAX));
      w.base = {};
    }
    isa::for_each_operand(inst.op, [&](isa::AccessPattern& ap, const isa::OperandRef&) {
      if (!ap.is_dynamic()) return;
      ap.offset = offsets.next();
      ap.dyn_reg = {};
      ap.dyn_scale = 0;
    });
    if (runs[e.index] > 1) {
      const std::string base = inst.name.empty() ? std::string(isa::op_name(inst.op)) : inst.name;
      inst.name = fmt::format("{}#{}", base, e.run);
    }
    out.program.instructions.push_back(std::move(inst));
    out.source.push_back(e.index);
    out.result.times.push_back(e.time);
  }
  return out;
}

}  // namespace trnsim::sim
