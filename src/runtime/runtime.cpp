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

}  // namespace trnsim::runtime
