// Launching a built kernel on a simulated device: one logical core, or several ranks of it
// at once (SPMD), all in one event loop so that they share the chip's HBM bandwidth.
//
// Every rank runs the same compiled programs on its own physical cores with its own HBM
// tensors: rank r's copy of the programs has every HBM operand moved up by r spans of the
// kernel's HBM footprint (rank 0 runs the compiled programs as they are).
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>

#include "isa/operands.h"
#include "runtime/collective_engine.h"
#include "runtime/runtime.h"
#include "util/format_bytes.h"
#include "util/host_memory.h"

namespace trnsim::runtime {

namespace {

// Ranks' HBM windows start on MiB boundaries.
constexpr std::uint64_t kRankAlignment = std::uint64_t{1} << 20;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Bytes from address 0 to the end of the kernel's last HBM tensor, rounded up: rank r's
// tensors lie r such spans higher than rank 0's.
std::uint64_t rank_hbm_span(const compiler::CompiledKernel& ck) {
  std::uint64_t end = 0;
  for (const compiler::HbmPlacement& p : ck.hbm) end = std::max(end, p.address + p.bytes);
  return (end + kRankAlignment - 1) / kRankAlignment * kRankAlignment;
}

// A rank's copy of a program: every HBM operand and .hbm declaration `shift` bytes higher.
isa::Program shifted_program(const isa::Program& program, std::uint64_t shift) {
  isa::Program out = program;
  for (isa::Instruction& inst : out.instructions)
    isa::for_each_operand(inst.op, [&](isa::AccessPattern& ap, const isa::OperandRef&) {
      if (ap.memory == isa::Memory::kHbm) ap.offset += shift;
    });
  for (isa::HbmTensor& t : out.hbm) t.address += shift;
  return out;
}

void check_inputs(const BuiltKernel& kernel, std::span<const HostTensor> inputs,
                  const std::string& rank) {
  const compiler::CompiledKernel& ck = kernel.compiled;
  if (inputs.size() != kernel.inputs.size())
    throw std::invalid_argument(fmt::format("{}kernel '{}' takes {} inputs, {} given", rank,
                                            ck.name, kernel.inputs.size(), inputs.size()));
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const kernel::TensorSpec& spec = kernel.inputs[i];
    if (inputs[i].dtype != spec.dtype || inputs[i].shape != spec.shape)
      throw std::invalid_argument(
          fmt::format("{}input {} ('{}'): the kernel was built for {} [{}], got {} [{}]", rank, i,
                      spec.name, numerics::name(spec.dtype), fmt::join(spec.shape, ", "),
                      numerics::name(inputs[i].dtype), fmt::join(inputs[i].shape, ", ")));
    // Checked without generating a deferred tensor's values.
    if (inputs[i].stored_size() != inputs[i].byte_size())
      throw std::invalid_argument(fmt::format("{}input {} ('{}') holds {} bytes, not {}", rank, i,
                                              spec.name, inputs[i].stored_size(),
                                              inputs[i].byte_size()));
  }
}

// A functional run holds the inputs on the host, every HBM tensor it touches in the simulated
// HBM (inputs, outputs, scratch) and the outputs read back, for every rank: refuse one that
// cannot fit in the host's memory before allocating any of it.
void require_host_memory(const BuiltKernel& kernel,
                         std::span<const std::span<const HostTensor>> ranks) {
  const std::uint64_t host = util::physical_memory_bytes();
  if (host == 0) return;
  double need = 0;
  for (const auto& inputs : ranks) {
    for (const compiler::HbmPlacement& p : kernel.compiled.hbm) {
      need += static_cast<double>(p.bytes);
      if (p.role == kernel::TensorRole::kOutput) need += static_cast<double>(p.bytes);
    }
    for (const HostTensor& t : inputs) need += static_cast<double>(t.byte_size());
  }
  if (need > static_cast<double>(host))
    throw sim::SimError(fmt::format(
        "kernel '{}': a functional run needs about {} of host memory for its data (inputs on "
        "the host, its HBM tensors in the simulated HBM, outputs read back{}); this host has {}. "
        "Time it without data (--timing-only, LaunchOptions::functional = false) or run a "
        "smaller problem",
        kernel.compiled.name, util::format_bytes(static_cast<std::uint64_t>(need)),
        ranks.size() > 1 ? fmt::format(", for each of {} ranks", ranks.size()) : "",
        util::format_bytes(host)));
}

// "tile 'acc' (declared at kernel.cpp:12:5)" for a storage of program `program`.
std::string describe_storage(const BuiltKernel& kernel, std::size_t program, kernel::StorageId id,
                             const char* what) {
  const kernel::Storage& s = kernel.ir[program].storages[id];
  if (!s.origin.known()) return fmt::format("{} '{}'", what, s.name);
  return fmt::format("{} '{}' (declared at {})", what, s.name, util::to_string(s.origin));
}

// Where the launch's ranks lie: rank r on chip r / ranks_per_chip, and on the device's cores
// first_core + r x programs onwards (the device numbers the launched cores of every chip in
// one row: a system's idle cores would only take host memory).
struct RankLayout {
  int ranks = 1;
  int programs = 1;        // physical cores per rank
  int first_core = 0;      // of rank 0
  std::uint64_t span = 0;  // HBM bytes between one rank's tensors and the next's
  int ranks_per_chip = 1;
  int chips() const { return (ranks + ranks_per_chip - 1) / ranks_per_chip; }
  int chip_of(int rank) const { return rank / ranks_per_chip; }
  // Slot of (rank, program) among its chip's launched cores.
  int slot(int rank, int program) const { return rank % ranks_per_chip * programs + program; }
  int core_of(int rank, int program) const { return first_core + rank * programs + program; }
  int rank_of(int core) const { return core < first_core ? -1 : (core - first_core) / programs; }
  int program_of(int core) const { return (core - first_core) % programs; }
  std::uint64_t shift(int rank) const { return static_cast<std::uint64_t>(rank) * span; }
};

// Names the kernel's data at a place of the launch's cores, from the compiler's placements:
// the HBM tensor holding an address (of whichever rank), or the tiles placed over an
// SBUF/PSUM byte (several when the allocator gave the place to tiles live at different times).
sim::MemoryNamer memory_namer(const BuiltKernel& kernel, RankLayout layout) {
  return [&kernel, layout](int core, isa::Memory memory, std::uint32_t partition,
                           std::uint64_t byte) -> std::string {
    const compiler::CompiledKernel& ck = kernel.compiled;
    if (memory == isa::Memory::kHbm) {
      const auto rank = layout.span > 0 ? static_cast<int>(byte / layout.span) : 0;
      if (rank >= layout.ranks) return "";  // beyond every rank's tensors
      const std::uint64_t local = byte - layout.shift(rank);
      for (const compiler::HbmPlacement& p : ck.hbm)
        if (local >= p.address && local < p.address + p.bytes) {
          const std::string name = describe_storage(
              kernel, static_cast<std::size_t>(std::max(p.program, 0)), p.storage, "tensor");
          return layout.ranks > 1 ? fmt::format("rank {}'s {}", rank, name) : name;
        }
      return "";
    }
    if (layout.rank_of(core) < 0 || layout.rank_of(core) >= layout.ranks) return "";
    const auto program = static_cast<std::size_t>(layout.program_of(core));
    std::vector<std::string> tiles;
    for (const compiler::OnChipPlacement& p : ck.onchip[program])
      if (p.memory == memory && partition < p.partitions && byte >= p.offset &&
          byte < p.offset + p.bytes)
        tiles.push_back(describe_storage(kernel, program, p.storage, "tile"));
    if (tiles.empty()) return "";
    if (tiles.size() == 1) return tiles.front();
    constexpr std::size_t kShown = 3;
    const std::size_t shown = std::min(tiles.size(), kShown);
    return fmt::format(
        "one of the tiles placed there: {}{}",
        fmt::join(tiles.begin(), tiles.begin() + static_cast<std::ptrdiff_t>(shown), ", "),
        tiles.size() > shown ? fmt::format(" and {} more", tiles.size() - shown) : "");
  };
}

// Allocates a rank's HBM tensors `shift` bytes up and, for a functional run, writes its
// constants and inputs.
void load_rank(sim::Device& device, const BuiltKernel& kernel, std::span<const HostTensor> inputs,
               std::uint64_t shift, bool functional) {
  const auto& ir0 = kernel.ir.front();
  for (const compiler::HbmPlacement& p : kernel.compiled.hbm) {
    device.allocate_at(p.address + shift, p.bytes);
    if (p.role == kernel::TensorRole::kConstant && functional)
      device.write(p.address + shift, *p.constant);
    if (p.role == kernel::TensorRole::kInput && functional) {
      const auto it = std::find(ir0.inputs.begin(), ir0.inputs.end(), p.storage);
      const auto arg = static_cast<std::size_t>(it - ir0.inputs.begin());
      device.write(p.address + shift, inputs[arg].bytes());
    }
  }
}

// The inputs some instruction of some program writes (an operand it writes lies in the
// input's storage), read back from the device; nullopt for the others.
std::vector<std::optional<HostTensor>> read_written_inputs(const BuiltKernel& kernel,
                                                           const sim::Device& device,
                                                           std::uint64_t shift) {
  const kernel::KernelIr& ir0 = kernel.ir.front();
  std::vector<bool> written(ir0.storages.size(), false);
  for (const kernel::KernelIr& ir : kernel.ir)
    for (const kernel::IrInstruction& inst : ir.instructions)
      isa::for_each_operand(inst.inst.op, [&](const isa::AccessPattern& ap, isa::OperandRef ref) {
        const kernel::StorageId id = kernel::storage_of_offset(ap.offset);
        if (ref.writes() && ap.memory == isa::Memory::kHbm && id < written.size())
          written[id] = true;
      });
  std::vector<std::optional<HostTensor>> inputs;
  for (kernel::StorageId id : ir0.inputs) {
    inputs.emplace_back();
    if (!written[id]) continue;
    for (const compiler::HbmPlacement& p : kernel.compiled.hbm)
      if (p.storage == id && p.program == -1)
        inputs.back() =
            HostTensor(p.name, p.dtype, p.shape, device.read(p.address + shift, p.bytes));
  }
  return inputs;
}

// A functional run's results of one rank: device prints, outputs and written inputs.
void read_rank_results(LaunchResult& result, const BuiltKernel& kernel, const sim::Device& device,
                       std::uint64_t shift, const LaunchOptions& options) {
  const compiler::CompiledKernel& ck = kernel.compiled;
  if (options.read_back_written_inputs)
    result.updated_inputs = read_written_inputs(kernel, device, shift);
  for (std::size_t p = 0; p < ck.programs.size(); ++p) {
    for (const kernel::Print& print : kernel.ir[p].prints) {
      const auto it =
          std::find_if(ck.hbm.begin(), ck.hbm.end(), [&](const compiler::HbmPlacement& h) {
            return h.storage == print.snapshot && h.program == static_cast<int>(p);
          });
      if (it == ck.hbm.end())
        throw std::logic_error("compiled kernel has no placement for a device_print snapshot");
      result.prints.push_back({print.prefix, static_cast<int>(p),
                               HostTensor(print.prefix, it->dtype, it->shape,
                                          device.read(it->address + shift, it->bytes))});
    }
  }
  for (kernel::StorageId id : kernel.ir.front().outputs) {
    const auto it = std::find_if(
        ck.hbm.begin(), ck.hbm.end(),
        [&](const compiler::HbmPlacement& p) { return p.storage == id && p.program == -1; });
    if (it == ck.hbm.end())
      throw std::logic_error("compiled kernel has no placement for an output");
    result.outputs.emplace_back(it->name, it->dtype, it->shape,
                                device.read(it->address + shift, it->bytes));
  }
}

// Checks that the ranks fit the chips' cores and HBM.
void check_fits(const BuiltKernel& kernel, const arch::ChipConfig& chip, const RankLayout& layout,
                int chips) {
  const compiler::CompiledKernel& ck = kernel.compiled;
  if (layout.ranks < 1) throw std::invalid_argument("a launch needs at least one rank");
  const int per_chip = std::min(layout.ranks, layout.ranks_per_chip);
  const int cores = layout.first_core + per_chip * layout.programs;
  if (layout.chips() > chips)
    throw std::invalid_argument(
        fmt::format("{} ranks at {} per chip need {} chips; the system has {}", layout.ranks,
                    layout.ranks_per_chip, layout.chips(), chips));
  if (layout.first_core < 0 || cores > chip.cores_per_chip)
    throw std::invalid_argument(
        layout.ranks > 1
            ? fmt::format("{} ranks of {} core{} from core {} need {} cores; {} has {}", per_chip,
                          layout.programs, layout.programs == 1 ? "" : "s", layout.first_core,
                          cores - layout.first_core, chip.name, chip.cores_per_chip)
            : fmt::format("{} programs from core {} do not fit the {} cores of {}", layout.programs,
                          layout.first_core, chip.cores_per_chip, chip.name));
  if (per_chip > 1 && static_cast<double>(layout.span) * per_chip >
                          static_cast<double>(arch::hbm_capacity_bytes(chip)))
    throw std::invalid_argument(
        fmt::format("{} ranks of kernel '{}' need {} of HBM ({} each); {} has {}", per_chip,
                    ck.name, util::format_bytes(layout.span * static_cast<std::uint64_t>(per_chip)),
                    util::format_bytes(layout.span), chip.name,
                    util::format_bytes(arch::hbm_capacity_bytes(chip))));
}

bool has_collectives(const compiler::CompiledKernel& ck) {
  return std::any_of(ck.programs.begin(), ck.programs.end(), [](const isa::Program& p) {
    return std::any_of(p.instructions.begin(), p.instructions.end(), [](const isa::Instruction& i) {
      return std::holds_alternative<isa::Collective>(i.op);
    });
  });
}

// Where a launch runs: one chip, or `ranks_per_chip` ranks on each chip of a system.
struct Target {
  const arch::ChipConfig& chip;
  const system::SystemConfig* system = nullptr;
  int ranks_per_chip = 0;  // system launches
};

RanksResult launch_all(const BuiltKernel& kernel, const Target& target,
                       std::span<const std::span<const HostTensor>> rank_inputs,
                       const LaunchOptions& options) {
  util::enter(options.progress, util::Progress::Phase::kLoading);
  const arch::ChipConfig& chip = target.chip;
  const compiler::CompiledKernel& ck = kernel.compiled;
  const int ranks = static_cast<int>(rank_inputs.size());
  RankLayout layout{ranks, static_cast<int>(ck.programs.size()), options.first_core,
                    rank_hbm_span(ck)};
  layout.ranks_per_chip = target.system != nullptr ? target.ranks_per_chip : std::max(ranks, 1);
  check_fits(kernel, chip, layout,
             target.system != nullptr ? static_cast<int>(target.system->chips()) : 1);
  for (int r = 0; r < layout.ranks; ++r)
    check_inputs(kernel, rank_inputs[static_cast<std::size_t>(r)],
                 layout.ranks > 1 ? fmt::format("rank {}: ", r) : "");

  if (options.functional) require_host_memory(kernel, rank_inputs);
  // One device holds every chip's launched cores, and HBM address space for all of them.
  const int chips = layout.chips();
  arch::ChipConfig device_chip = chip;
  device_chip.hbm.capacity_gib.value *= chips;
  sim::Device device(device_chip, layout.first_core + ranks * layout.programs);
  // Rank 0 runs the compiled programs; the others their shifted copies.
  std::vector<std::vector<isa::Program>> copies(static_cast<std::size_t>(layout.ranks));
  for (int r = 0; r < layout.ranks; ++r) {
    load_rank(device, kernel, rank_inputs[static_cast<std::size_t>(r)], layout.shift(r),
              options.functional);
    if (r > 0)
      for (const isa::Program& p : ck.programs)
        copies[static_cast<std::size_t>(r)].push_back(shifted_program(p, layout.shift(r)));
  }
  const auto program_of_rank = [&](int r, int p) -> const isa::Program& {
    return r == 0 ? ck.programs[static_cast<std::size_t>(p)]
                  : copies[static_cast<std::size_t>(r)][static_cast<std::size_t>(p)];
  };

  const auto t0 = std::chrono::steady_clock::now();
  // A chip timing model per chip: the cores of a chip's ranks share its HBM bandwidth.
  std::vector<std::unique_ptr<sim::ChipTimingModel>> chip_timing;
  for (int c = 0; c < chips; ++c)
    chip_timing.push_back(std::make_unique<sim::ChipTimingModel>(
        chip, std::min(layout.ranks_per_chip, ranks - c * layout.ranks_per_chip) * layout.programs,
        sim::TimingOptions{options.power_ramp}));
  std::vector<sim::CoreProgram> launches;
  for (int r = 0; r < layout.ranks; ++r)
    for (int p = 0; p < layout.programs; ++p)
      launches.push_back(
          {layout.core_of(r, p), &program_of_rank(r, p),
           options.timing
               ? chip_timing[static_cast<std::size_t>(layout.chip_of(r))]->core(layout.slot(r, p))
               : nullptr,
           r});
  std::optional<detail::SystemCollectives> collectives;
  if (has_collectives(ck))
    collectives.emplace(target.system != nullptr ? *target.system : detail::one_chip_system(chip),
                        layout.ranks_per_chip);
  sim::RunOptions run_options;
  run_options.check_hazards = options.check_hazards;
  run_options.uninitialized = options.uninitialized;
  run_options.functional = options.functional;
  run_options.seed = options.seed;
  run_options.name_memory = memory_namer(kernel, layout);
  run_options.progress = options.progress;  // the simulating phase
  run_options.collectives = collectives ? &*collectives : nullptr;
  // The compiler validated the programs against this very chip: a timing-only run need not
  // check them again (functional runs always do; moving HBM operands keeps them valid).
  run_options.validate = !(ck.validated_for && *ck.validated_for == chip);
  sim::MultiRunResult multi = sim::run_cores(device, launches, run_options);

  RanksResult out;
  out.host_seconds = seconds_since(t0);
  out.simulated_ns = options.timing ? multi.end_time : 0;
  if (collectives) out.collectives = collectives->records();
  const int launched = layout.ranks * layout.programs;
  if (options.timing && launched > 1) {
    const auto per_chip =
        static_cast<std::size_t>(layout.ranks_per_chip) * static_cast<std::size_t>(layout.programs);
    for (int c = 0; c < chips; ++c) {
      const std::size_t first = static_cast<std::size_t>(c) * per_chip;
      const std::size_t count = std::min(launches.size() - first, per_chip);
      out.chips.push_back(chip_timing[static_cast<std::size_t>(c)]->chip_report(
          std::span(launches).subspan(first, count),
          std::span<const sim::RunResult>(multi.cores).subspan(first, count)));
    }
    if (chips == 1) out.chip_timing = out.chips.front();
  }
  for (int r = 0; r < layout.ranks; ++r) {
    LaunchResult& rank = out.ranks.emplace_back();
    const std::size_t count = static_cast<std::size_t>(layout.programs);
    const std::size_t first = static_cast<std::size_t>(r) * count;
    for (std::size_t i = first; i < first + count; ++i)
      rank.runs.push_back(std::move(multi.cores[i]));
    rank.host_seconds = out.host_seconds;
    if (options.timing) {
      const sim::ChipTimingModel& model = *chip_timing[static_cast<std::size_t>(layout.chip_of(r))];
      for (int p = 0; p < layout.programs; ++p)
        rank.timing.push_back(model.report(layout.slot(r, p), program_of_rank(r, p),
                                           rank.runs[static_cast<std::size_t>(p)]));
      if (layout.programs > 1)
        rank.chip_timing = model.chip_report(std::span(launches).subspan(first, count),
                                             std::span<const sim::RunResult>(rank.runs));
      for (const sim::RunResult& run : rank.runs)
        rank.simulated_ns = std::max(rank.simulated_ns, run.end_time);
    }
    if (options.functional) read_rank_results(rank, kernel, device, layout.shift(r), options);
  }
  return out;
}

}  // namespace

LaunchResult launch(const BuiltKernel& kernel, const arch::ChipConfig& chip,
                    std::span<const HostTensor> inputs, const LaunchOptions& options) {
  const std::span<const HostTensor> one[] = {inputs};
  RanksResult all = launch_all(kernel, Target{chip}, one, options);
  return std::move(all.ranks.front());
}

RanksResult launch_ranks(const BuiltKernel& kernel, const arch::ChipConfig& chip,
                         std::span<const std::vector<HostTensor>> inputs,
                         const LaunchOptions& options) {
  std::vector<std::span<const HostTensor>> spans(inputs.begin(), inputs.end());
  return launch_all(kernel, Target{chip}, spans, options);
}

RanksResult launch_system(const BuiltKernel& kernel, const system::SystemConfig& system,
                          std::span<const std::vector<HostTensor>> inputs, int ranks_per_chip,
                          const LaunchOptions& options) {
  const arch::ChipConfig& chip = system.chip_config;
  const int programs = static_cast<int>(kernel.compiled.programs.size());
  if (ranks_per_chip < 0)
    throw std::invalid_argument(fmt::format(
        "{} ranks per chip: a positive count (or 0 for as many as the chip's cores hold)",
        ranks_per_chip));
  if (ranks_per_chip == 0) ranks_per_chip = std::max(1, chip.cores_per_chip / programs);
  std::vector<std::span<const HostTensor>> spans(inputs.begin(), inputs.end());
  return launch_all(kernel, Target{chip, &system, ranks_per_chip}, spans, options);
}

}  // namespace trnsim::runtime
