// The kernel compiler's driver: compile() runs the passes in order (docs/compiler.md
// describes each): launch checks and HBM layout (launch.cpp), verify (verify.cpp), allocate
// (allocate.cpp), dependencies (dependencies.cpp), schedule (schedule.cpp), synchronise
// (synchronise.cpp) and the final validation (here).
#include "compiler/compiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <set>
#include <stdexcept>

#include "compiler/passes.h"
#include "isa/validate.h"

namespace trnsim::compiler {

using namespace detail;

namespace {

class PassTimer {
 public:
  explicit PassTimer(CompileStats& stats) : stats_(stats) {}
  void done(const std::string& pass) {
    const auto now = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - last_).count();
    auto it = std::find_if(stats_.pass_ms.begin(), stats_.pass_ms.end(),
                           [&](const auto& e) { return e.first == pass; });
    if (it == stats_.pass_ms.end())
      stats_.pass_ms.emplace_back(pass, ms);
    else
      it->second += ms;
    last_ = now;
  }

 private:
  CompileStats& stats_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// The DMA queues the compiler spreads transfers over: those asked for, or all the chip has.
int dma_queues_to_use(const CompileOptions& options, const arch::ChipConfig& chip) {
  const int available = static_cast<int>(chip.dma.queues_per_engine.value);
  if (options.dma_queues == 0) return available;
  if (options.dma_queues < 0 || options.dma_queues > available)
    throw std::invalid_argument(
        fmt::format("CompileOptions::dma_queues = {} (0 for all, or 1..{} on {})",
                    options.dma_queues, available, chip.name));
  return options.dma_queues;
}

// The on-chip placements of one program and the allocation figures of the stats.
void record_allocation(const KernelIr& ir, const Allocation& alloc,
                       std::vector<OnChipPlacement>& onchip, CompileStats& stats) {
  for (const Storage& s : ir.storages) {
    if (!alloc.places[s.id].placed) continue;
    OnChipPlacement o;
    o.storage = s.id;
    o.memory = kernel::memory_of(s.buffer);
    o.offset = alloc.places[s.id].offset;
    o.bytes = s.bytes;
    o.partitions = s.partitions;
    o.first_use = alloc.life[s.id].first;
    o.last_use = alloc.life[s.id].last;
    onchip.push_back(o);
  }
  stats.sbuf_peak_bytes = std::max(stats.sbuf_peak_bytes, alloc.sbuf_peak);
  stats.psum_peak_bytes = std::max(stats.psum_peak_bytes, alloc.psum_peak);
  stats.sbuf_extent_bytes = std::max(stats.sbuf_extent_bytes, alloc.sbuf_extent);
  stats.psum_extent_bytes = std::max(stats.psum_extent_bytes, alloc.psum_extent);
}

}  // namespace

// Pass 4: the engines and DMA queues the kernel fixed, then the scheduler (schedule.cpp).
SchedResult detail::schedule_ir(const KernelIr& ir, const std::vector<isa::Instruction>& phys,
                                const std::vector<std::uint8_t>& allowed,
                                const std::vector<std::vector<std::uint32_t>>& preds,
                                const arch::ChipConfig& chip, const CompileOptions& options) {
  std::vector<int> fixed_queue(ir.instructions.size(), -1);
  std::vector<std::uint8_t> engines = allowed;
  for (std::size_t i = 0; i < ir.instructions.size(); ++i) {
    const IrInstruction& in = ir.instructions[i];
    if (in.dma_queue) fixed_queue[i] = *in.dma_queue;
    if (in.engine_fixed) {
      const std::uint8_t asked = in.engines & engines[i];
      if (asked == 0)
        throw KernelError(in.inst.origin,
                          fmt::format("{}: the engine the kernel asked for cannot run it",
                                      isa::op_name(in.inst.op)));
      // The lowest engine asked for (engine_fixed means one bit).
      engines[i] = static_cast<std::uint8_t>(asked & (~asked + 1));
    }
  }
  std::vector<std::uint32_t> order_blocks(ir.instructions.size(), 0);
  for (std::size_t i = 0; i < ir.instructions.size(); ++i)
    order_blocks[i] = ir.instructions[i].order_block;
  SchedInput in{&phys, &engines, &fixed_queue, &preds, &order_blocks};
  const int dma_queues = dma_queues_to_use(options, chip);
  return options.schedule ? schedule_list(in, chip, dma_queues) : schedule_in_order(in, dma_queues);
}

namespace {

// Pass 6: validate. An output program that fails the ISA rules is a compiler bug.
void validate_compiled(const isa::Program& prog, const arch::ChipConfig& chip, std::size_t p,
                       const KernelIr& ir) {
  try {
    isa::validate_program(prog, chip);
  } catch (const isa::ValidationError& e) {
    throw std::logic_error(
        fmt::format("trnsim compiler bug: program {} of kernel '{}' fails "
                    "ISA validation after compilation: {}",
                    p, ir.name, e.what()));
  }
}

// The HBM tensors program `p` addresses, as its .hbm declarations: printed, the program
// runs with `trnsim run-asm` as written. Names are the kernel's, made assembly identifiers
// and unique ("load x" -> load_x, a second "y" -> y_1).
std::vector<isa::HbmTensor> hbm_declarations(const std::vector<HbmPlacement>& hbm, int p) {
  std::vector<isa::HbmTensor> out;
  std::set<std::string> taken;
  for (const HbmPlacement& h : hbm) {
    if (h.program != -1 && h.program != p) continue;
    std::string name = h.name.empty() ? "tensor" : h.name;
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    if (std::isdigit(static_cast<unsigned char>(name.front()))) name = "_" + name;
    std::string unique = name;
    for (int n = 1; !taken.insert(unique).second; ++n) unique = fmt::format("{}_{}", name, n);
    isa::HbmTensor t{unique, h.address, h.dtype, {}};
    for (const std::int64_t d : h.shape) t.shape.push_back(static_cast<std::uint64_t>(d));
    if (t.shape.empty()) t.shape.push_back(1);  // a scalar
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

CompiledKernel compile(std::span<const KernelIr> programs, const arch::ChipConfig& chip,
                       const CompileOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  CompiledKernel out;
  PassTimer timer(out.stats);
  check_launch(programs);
  out.name = programs[0].name;
  dma_queues_to_use(options, chip);  // a bad option fails before any pass runs
  const int num_queues = kFirstDmaQueueKey + static_cast<int>(chip.dma.queues_per_engine.value);

  std::vector<std::vector<std::uint8_t>> allowed;
  for (const KernelIr& ir : programs) allowed.push_back(verify(ir, chip));
  timer.done("verify");

  std::vector<std::vector<std::uint64_t>> hbm_addr = layout_hbm(programs, out.hbm);
  std::vector<Allocation> allocs;
  for (const KernelIr& ir : programs) allocs.push_back(allocate(ir, chip));
  timer.done("allocate");

  out.programs.resize(programs.size());
  out.onchip.resize(programs.size());
  for (std::size_t p = 0; p < programs.size(); ++p) {
    const KernelIr& ir = programs[p];
    const Allocation& alloc = allocs[p];
    record_allocation(ir, alloc, out.onchip[p], out.stats);
    std::vector<isa::Instruction> phys = rebase(ir, alloc, hbm_addr[p]);
    timer.done("allocate");

    SyncResult sync;
    if (has_control_flow(ir)) {
      double estimated_ns = 0;
      sync =
          compile_with_loops(ir, phys, allowed[p], alloc, chip, options, num_queues, estimated_ns);
      out.stats.estimated_ns = std::max(out.stats.estimated_ns, estimated_ns);
      timer.done("schedule");
    } else {
      std::vector<std::vector<std::uint32_t>> flow;
      const auto preds = dependencies(ir, phys, alloc, flow);
      timer.done("dependencies");

      const SchedResult sched = schedule_ir(ir, phys, allowed[p], preds, chip, options);
      out.stats.estimated_ns = std::max(out.stats.estimated_ns, sched.estimated_ns);
      timer.done("schedule");

      sync = synchronise(phys, sched, preds, flow, num_queues);
    }
    out.stats.waits += sync.waits;
    out.stats.signals += sync.signals;
    out.stats.dependencies += sync.cross_edges;
    isa::Program& prog = out.programs[p];
    prog.instructions = std::move(sync.program);
    prog.hbm = hbm_declarations(out.hbm, static_cast<int>(p));
    out.stats.instructions += prog.instructions.size();
    timer.done("synchronise");

    validate_compiled(prog, chip, p, ir);
    timer.done("validate");
  }
  out.validated_for = chip;
  out.stats.total_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace trnsim::compiler
