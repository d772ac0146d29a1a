#include "runtime/runtime.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include "isa/operands.h"
#include "numerics/numerics.h"
#include "util/format_bytes.h"
#include "util/host_memory.h"
#include "util/huge_pages.h"

namespace trnsim::runtime {

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The element count, or -1 when a dim is negative or the count overflows int64.
std::int64_t product(const kernel::Shape& s) {
  std::int64_t n = 1;
  for (std::int64_t d : s)
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return -1;
  return n;
}

// SplitMix64 of (seed, index): independent of how the tensor is split or visited.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The values of random_tensor: element i from (seed, i) alone.
void generate_uniform(std::span<float> values, std::uint32_t seed, float lo, float hi) {
  const std::uint64_t base = std::uint64_t{seed} << 32;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double u = static_cast<double>(mix(base + i) >> 11) * 0x1.0p-53;
    values[i] = static_cast<float>(lo + (hi - lo) * u);
  }
}

}  // namespace

HostTensor::HostTensor(std::string name_, DType dtype_, kernel::Shape shape_,
                       std::vector<std::uint8_t> bytes)
    : name(std::move(name_)), dtype(dtype_), shape(std::move(shape_)), bytes_(std::move(bytes)) {}

std::int64_t HostTensor::words() const {
  return product(shape);
}

std::size_t HostTensor::byte_size() const {
  return static_cast<std::size_t>(words()) * numerics::storage_bytes(dtype);
}

std::size_t HostTensor::stored_size() const {
  return deferred_ == nullptr ? bytes_.size() : deferred_->bytes_made;
}

const std::vector<std::uint8_t>& HostTensor::bytes() const {
  if (deferred_ == nullptr) return bytes_;
  Deferred& d = *deferred_;
  std::call_once(d.once, [&d, this] {
    d.bytes = d.make();
    if (d.bytes.size() != d.bytes_made)
      throw std::logic_error(fmt::format("{}: the deferred contents have {} bytes, not {}", name,
                                         d.bytes.size(), d.bytes_made));
    d.make = nullptr;  // frees what the recipe captured
    d.ready.store(true, std::memory_order_release);
  });
  return d.bytes;
}

std::vector<std::uint8_t>& HostTensor::mutable_bytes() {
  if (deferred_ != nullptr) {
    bytes_ = bytes();  // the shared values stay as they are for the other copies
    deferred_.reset();
  }
  return bytes_;
}

HostTensor HostTensor::zeros(std::string name, DType dtype, kernel::Shape shape) {
  HostTensor t(std::move(name), dtype, std::move(shape), {});
  t.bytes_.assign(t.byte_size(), 0);
  return t;
}

HostTensor HostTensor::from_floats(std::string name, DType dtype, kernel::Shape shape,
                                   std::span<const float> values) {
  HostTensor t = zeros(std::move(name), dtype, std::move(shape));
  const std::size_t per_word = numerics::info(dtype).elements_per_word;
  if (values.size() != static_cast<std::size_t>(t.words()) * per_word)
    throw std::invalid_argument(fmt::format("{}: {} values for {} words of {}", t.name,
                                            values.size(), t.words(), numerics::name(dtype)));
  numerics::encode_bytes(dtype, values, std::as_writable_bytes(std::span(t.bytes_)));
  return t;
}

std::vector<float> HostTensor::to_floats() const {
  const std::size_t per_word = numerics::info(dtype).elements_per_word;
  std::vector<float> out;
  util::assign_huge(out, static_cast<std::size_t>(words()) * per_word);
  numerics::decode_bytes(dtype, std::as_bytes(std::span(bytes())), out);
  return out;
}

HostTensor HostTensor::deferred(std::string name, DType dtype, kernel::Shape shape,
                                std::function<std::vector<std::uint8_t>()> make) {
  HostTensor t(std::move(name), dtype, std::move(shape), {});
  if (t.words() < 0 || numerics::storage_bytes(dtype) == 0)
    throw std::invalid_argument(fmt::format("{}: no contents for shape [{}] of {} ({})", t.name,
                                            fmt::join(t.shape, ", "), numerics::name(dtype),
                                            numerics::storage_bytes(dtype) == 0
                                                ? "the type has no storage size"
                                                : "a negative dim, or more elements than 2^63"));
  t.deferred_ = std::make_shared<Deferred>();
  t.deferred_->make = std::move(make);
  t.deferred_->bytes_made = t.byte_size();
  return t;
}

HostTensor random_tensor(std::string name, DType dtype, kernel::Shape shape, std::uint32_t seed,
                         float lo, float hi) {
  const std::int64_t words = product(shape);  // deferred() rejects a negative count
  return HostTensor::deferred(std::move(name), dtype, std::move(shape), [=] {
    std::vector<float> values;
    util::assign_huge(values,
                      static_cast<std::size_t>(words) * numerics::info(dtype).elements_per_word);
    generate_uniform(values, seed, lo, hi);
    std::vector<std::uint8_t> bytes;
    util::assign_huge(bytes, static_cast<std::size_t>(words) * numerics::storage_bytes(dtype));
    numerics::encode_bytes(dtype, values, std::as_writable_bytes(std::span(bytes)));
    return bytes;
  });
}

BuiltKernel build(const kernel::KernelFn& fn, std::span<const kernel::TensorSpec> inputs,
                  const arch::ChipConfig& chip, const BuildOptions& options) {
  BuiltKernel built;
  built.inputs.assign(inputs.begin(), inputs.end());
  auto t0 = std::chrono::steady_clock::now();
  util::enter(options.progress, util::Progress::Phase::kTracing);
  built.ir = kernel::trace(fn, inputs, chip, {options.name, options.lnc});
  built.trace_ms = ms_since(t0);
  util::enter(options.progress, util::Progress::Phase::kCompiling);
  t0 = std::chrono::steady_clock::now();
  built.compiled = compiler::compile(built.ir, chip, options.compile);
  built.compile_ms = ms_since(t0);
  return built;
}

namespace {

// A functional run holds the inputs on the host, every HBM tensor it touches in the simulated
// HBM (inputs, outputs, scratch) and the outputs read back: refuse one that cannot fit in
// the host's memory before allocating any of it.
void require_host_memory(const BuiltKernel& kernel, std::span<const HostTensor> inputs) {
  const std::uint64_t host = util::physical_memory_bytes();
  if (host == 0) return;
  double need = 0;
  for (const compiler::HbmPlacement& p : kernel.compiled.hbm) {
    need += static_cast<double>(p.bytes);
    if (p.role == kernel::TensorRole::kOutput) need += static_cast<double>(p.bytes);
  }
  for (const HostTensor& t : inputs) need += static_cast<double>(t.byte_size());
  if (need > static_cast<double>(host))
    throw sim::SimError(fmt::format(
        "kernel '{}': a functional run needs about {} of host memory for its data (inputs on "
        "the host, its HBM tensors in the simulated HBM, outputs read back); this host has {}. "
        "Time it without data (--timing-only, LaunchOptions::functional = false) or run a "
        "smaller problem",
        kernel.compiled.name, util::format_bytes(static_cast<std::uint64_t>(need)),
        util::format_bytes(host)));
}

// "tile 'acc' (declared at kernel.cpp:12:5)" for a storage of program `program`.
std::string describe_storage(const BuiltKernel& kernel, std::size_t program, kernel::StorageId id,
                             const char* what) {
  const kernel::Storage& s = kernel.ir[program].storages[id];
  if (!s.origin.known()) return fmt::format("{} '{}'", what, s.name);
  return fmt::format("{} '{}' (declared at {})", what, s.name, util::to_string(s.origin));
}

// Names the kernel's data at a place of the launch's cores, from the compiler's placements:
// the HBM tensor holding an address, or the tiles placed over an SBUF/PSUM byte (several
// when the allocator gave the place to tiles live at different times).
sim::MemoryNamer memory_namer(const BuiltKernel& kernel, int first_core) {
  return [&kernel, first_core](int core, isa::Memory memory, std::uint32_t partition,
                               std::uint64_t byte) -> std::string {
    const compiler::CompiledKernel& ck = kernel.compiled;
    if (memory == isa::Memory::kHbm) {
      for (const compiler::HbmPlacement& p : ck.hbm)
        if (byte >= p.address && byte < p.address + p.bytes)
          return describe_storage(kernel, static_cast<std::size_t>(std::max(p.program, 0)),
                                  p.storage, "tensor");
      return "";
    }
    const auto program = static_cast<std::size_t>(core - first_core);
    if (core < first_core || program >= ck.onchip.size()) return "";
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

// The inputs some instruction of some program writes (an operand it writes lies in the
// input's storage), read back from the device; nullopt for the others.
std::vector<std::optional<HostTensor>> read_written_inputs(const BuiltKernel& kernel,
                                                           sim::Device& device) {
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
        inputs.back() = HostTensor(p.name, p.dtype, p.shape, device.read(p.address, p.bytes));
  }
  return inputs;
}

}  // namespace

LaunchResult launch(const BuiltKernel& kernel, const arch::ChipConfig& chip,
                    std::span<const HostTensor> inputs, const LaunchOptions& options) {
  util::enter(options.progress, util::Progress::Phase::kLoading);
  const compiler::CompiledKernel& ck = kernel.compiled;
  const int programs = static_cast<int>(ck.programs.size());
  if (inputs.size() != kernel.inputs.size())
    throw std::invalid_argument(fmt::format("kernel '{}' takes {} inputs, {} given", ck.name,
                                            kernel.inputs.size(), inputs.size()));
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const kernel::TensorSpec& spec = kernel.inputs[i];
    if (inputs[i].dtype != spec.dtype || inputs[i].shape != spec.shape)
      throw std::invalid_argument(
          fmt::format("input {} ('{}'): the kernel was built for {} [{}], got {} [{}]", i,
                      spec.name, numerics::name(spec.dtype), fmt::join(spec.shape, ", "),
                      numerics::name(inputs[i].dtype), fmt::join(inputs[i].shape, ", ")));
    // Checked without generating a deferred tensor's values.
    if (inputs[i].stored_size() != inputs[i].byte_size())
      throw std::invalid_argument(fmt::format("input {} ('{}') holds {} bytes, not {}", i,
                                              spec.name, inputs[i].stored_size(),
                                              inputs[i].byte_size()));
  }
  const int cores = options.first_core + programs;
  if (options.first_core < 0 || cores > chip.cores_per_chip)
    throw std::invalid_argument(
        fmt::format("{} programs from core {} do not fit the {} cores of {}", programs,
                    options.first_core, chip.cores_per_chip, chip.name));

  if (options.functional) require_host_memory(kernel, inputs);
  sim::Device device(chip, cores);
  const auto& ir0 = kernel.ir.front();
  for (const compiler::HbmPlacement& p : ck.hbm) {
    device.allocate_at(p.address, p.bytes);
    if (p.role == kernel::TensorRole::kConstant && options.functional)
      device.write(p.address, *p.constant);
    if (p.role == kernel::TensorRole::kInput && options.functional) {
      const auto it = std::find(ir0.inputs.begin(), ir0.inputs.end(), p.storage);
      const auto arg = static_cast<std::size_t>(it - ir0.inputs.begin());
      device.write(p.address, inputs[arg].bytes());
    }
  }

  LaunchResult result;
  const auto t0 = std::chrono::steady_clock::now();
  // One chip timing model: the cores share HBM bandwidth (docs/timing-model.md).
  sim::ChipTimingModel chip_timing(chip, programs, sim::TimingOptions{options.power_ramp});
  std::vector<sim::CoreProgram> launches;
  for (int p = 0; p < programs; ++p)
    launches.push_back({options.first_core + p, &ck.programs[static_cast<std::size_t>(p)],
                        options.timing ? chip_timing.core(p) : nullptr});
  sim::RunOptions run_options;
  run_options.check_hazards = options.check_hazards;
  run_options.uninitialized = options.uninitialized;
  run_options.functional = options.functional;
  run_options.seed = options.seed;
  run_options.name_memory = memory_namer(kernel, options.first_core);
  run_options.progress = options.progress;  // the simulating phase
  // The compiler validated the programs against this very chip: a timing-only run need not
  // check them again (functional runs always do).
  run_options.validate = !(ck.validated_for && *ck.validated_for == chip);
  sim::MultiRunResult multi = sim::run_cores(device, launches, run_options);
  result.host_seconds = ms_since(t0) / 1000.0;
  if (options.timing && programs > 1) result.chip_timing = chip_timing.chip_report(launches, multi);
  result.runs = std::move(multi.cores);
  if (options.timing) {
    for (int p = 0; p < programs; ++p)
      result.timing.push_back(chip_timing.report(p, ck.programs[static_cast<std::size_t>(p)],
                                                 result.runs[static_cast<std::size_t>(p)]));
    result.simulated_ns = multi.end_time;
  }
  if (options.functional && options.read_back_written_inputs)
    result.updated_inputs = read_written_inputs(kernel, device);
  if (options.functional) {
    for (int p = 0; p < programs; ++p) {
      for (const kernel::Print& print : kernel.ir[static_cast<std::size_t>(p)].prints) {
        const auto it =
            std::find_if(ck.hbm.begin(), ck.hbm.end(), [&](const compiler::HbmPlacement& h) {
              return h.storage == print.snapshot && h.program == p;
            });
        if (it == ck.hbm.end())
          throw std::logic_error("compiled kernel has no placement for a device_print snapshot");
        result.prints.push_back(
            {print.prefix, p,
             HostTensor(print.prefix, it->dtype, it->shape, device.read(it->address, it->bytes))});
      }
    }
    for (kernel::StorageId id : ir0.outputs) {
      const auto it = std::find_if(
          ck.hbm.begin(), ck.hbm.end(),
          [&](const compiler::HbmPlacement& p) { return p.storage == id && p.program == -1; });
      if (it == ck.hbm.end())
        throw std::logic_error("compiled kernel has no placement for an output");
      HostTensor out(it->name, it->dtype, it->shape, device.read(it->address, it->bytes));
      result.outputs.push_back(std::move(out));
    }
  }
  return result;
}

}  // namespace trnsim::runtime
