#include "runtime/runtime.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include "numerics/numerics.h"

namespace trnsim::runtime {

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::int64_t product(const kernel::Shape& s) {
  return std::accumulate(s.begin(), s.end(), std::int64_t{1}, std::multiplies<>());
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
  if (deferred_ == nullptr) return bytes_.size();
  return static_cast<std::size_t>(deferred_->words) * numerics::storage_bytes(deferred_->dtype);
}

const std::vector<std::uint8_t>& HostTensor::bytes() const {
  if (deferred_ == nullptr) return bytes_;
  Deferred& d = *deferred_;
  std::call_once(d.once, [&d] {
    std::vector<float> values(static_cast<std::size_t>(d.words) *
                              numerics::info(d.dtype).elements_per_word);
    generate_uniform(values, d.seed, d.lo, d.hi);
    d.bytes.assign(static_cast<std::size_t>(d.words) * numerics::storage_bytes(d.dtype), 0);
    numerics::encode_bytes(d.dtype, values, std::as_writable_bytes(std::span(d.bytes)));
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
  std::vector<float> out(static_cast<std::size_t>(words()) * per_word);
  numerics::decode_bytes(dtype, std::as_bytes(std::span(bytes())), out);
  return out;
}

HostTensor random_tensor(std::string name, DType dtype, kernel::Shape shape, std::uint32_t seed,
                         float lo, float hi) {
  HostTensor t(std::move(name), dtype, std::move(shape), {});
  if (t.words() < 0 || numerics::storage_bytes(dtype) == 0)
    throw std::invalid_argument(fmt::format("{}: no random values for shape [{}] of {}", t.name,
                                            fmt::join(t.shape, ", "), numerics::name(dtype)));
  t.deferred_ = std::make_shared<HostTensor::Deferred>();
  t.deferred_->dtype = dtype;
  t.deferred_->words = t.words();
  t.deferred_->seed = seed;
  t.deferred_->lo = lo;
  t.deferred_->hi = hi;
  return t;
}

BuiltKernel build(const kernel::KernelFn& fn, std::span<const kernel::TensorSpec> inputs,
                  const arch::ChipConfig& chip, const BuildOptions& options) {
  BuiltKernel built;
  built.inputs.assign(inputs.begin(), inputs.end());
  auto t0 = std::chrono::steady_clock::now();
  built.ir = kernel::trace(fn, inputs, chip, {options.name, options.lnc});
  built.trace_ms = ms_since(t0);
  t0 = std::chrono::steady_clock::now();
  built.compiled = compiler::compile(built.ir, chip, options.compile);
  built.compile_ms = ms_since(t0);
  return built;
}

LaunchResult launch(const BuiltKernel& kernel, const arch::ChipConfig& chip,
                    std::span<const HostTensor> inputs, const LaunchOptions& options) {
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

  sim::Device device(chip, cores);
  const auto& ir0 = kernel.ir.front();
  for (const compiler::HbmPlacement& p : ck.hbm) {
    device.allocate_at(p.address, p.bytes);
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
  // The compiler validated the programs against this very chip: a timing-only run need not
  // check them again (functional runs always do).
  run_options.validate = !(ck.validated_for && *ck.validated_for == chip);
  sim::MultiRunResult multi = sim::run_cores(device, launches, run_options);
  result.host_seconds = ms_since(t0) / 1000.0;
  result.runs = std::move(multi.cores);
  if (options.timing) {
    for (int p = 0; p < programs; ++p)
      result.timing.push_back(chip_timing.report(p, ck.programs[static_cast<std::size_t>(p)],
                                                 result.runs[static_cast<std::size_t>(p)]));
    result.simulated_ns = multi.end_time;
  }
  if (options.functional) {
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
