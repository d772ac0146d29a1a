// Device, Core, SimError and the custom-operator registry.
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <mutex>

#include "sim/describe.h"
#include "sim/memory.h"
#include "sim/ops_math.h"
#include "sim/sim.h"
#include "util/enum_names.h"

namespace trnsim::sim {

namespace {

util::Diagnostic with_core(int core, util::Diagnostic d) {
  d.message = fmt::format("core {}: {}", core, d.message);
  return d;
}

std::uint32_t whole(const arch::Param& p, const char* what) {
  const double v = p.value;
  if (!(v >= 1) || v != std::floor(v) || v > 4294967295.0)
    throw SimError(fmt::format("chip config: {} = {} is not a positive whole number", what, v));
  return static_cast<std::uint32_t>(v);
}

}  // namespace

SimError::SimError(std::string why) : util::Error(util::unlocated(why)), why_(std::move(why)) {}

SimError::SimError(util::Diagnostic diagnostic)
    : util::Error(diagnostic), why_(std::move(diagnostic.message)) {}

SimError::SimError(std::size_t index, std::string op, isa::Origin origin, std::string why,
                   std::vector<util::Note> notes)
    : util::Error(util::Diagnostic{std::move(origin),
                                   fmt::format("instruction {} ({}): {}", index, op, why),
                                   std::move(notes)}),
      index_(index),
      op_(std::move(op)),
      why_(std::move(why)) {}

SimError::SimError(int core, const SimError& inner)
    : util::Error(with_core(core, inner.diagnostics().front())),
      index_(inner.index_),
      core_(core),
      op_(inner.op_),
      why_(inner.why_) {}

std::string_view hazard_kind_name(HazardKind kind) {
  static constexpr std::array<std::string_view, 3> kNames = {"RAW", "WAR", "WAW"};
  return util::enum_name(kNames, kind);
}

// ---------------------------------------------------------------------------------------
// Core

Core::Core(const arch::ChipConfig& chip, int index) : index_(index) {
  sbuf_ = std::make_unique<OnChipMemory>(
      "sbuf", whole(chip.sbuf.partitions, "sbuf.partitions"),
      whole(chip.sbuf.bytes_per_partition, "sbuf.bytes_per_partition"));
  psum_ = std::make_unique<OnChipMemory>(
      "psum", whole(chip.psum.partitions, "psum.partitions"),
      whole(chip.psum.bytes_per_partition, "psum.bytes_per_partition"));
  // The gen4 Vector engine keeps four XORWOW generators per lane; GpSimd (and the gen3
  // Vector engine's single stream) one.
  vector_generators_ = chip.generation >= arch::Generation::kGen4 ? 4 : 1;
  const std::size_t lanes = sbuf_->partitions();
  vector_rng_.assign(lanes * vector_generators_ * math::kXorwowWords, 0);
  gpsimd_rng_.assign(lanes * math::kXorwowWords, 0);
  vector_accumulators_.assign(lanes, 0.0f);
  reset_engine_state(0);
}

Core::~Core() = default;
Core::Core(Core&&) noexcept = default;
Core& Core::operator=(Core&&) noexcept = default;

void Core::reset_engine_state(std::uint32_t seed) {
  math::seed_xorwow(vector_rng_, seed, isa::Engine::kVector);
  math::seed_xorwow(gpsimd_rng_, seed, isa::Engine::kGpSimd);
  std::ranges::fill(vector_accumulators_, 0.0f);
}

void Core::seed_rng(isa::Engine engine, std::uint32_t seed) {
  math::seed_xorwow(engine == isa::Engine::kVector ? vector_rng_ : gpsimd_rng_, seed, engine);
}

float& Core::vector_accumulator(std::uint32_t partition) {
  return vector_accumulators_.at(partition);
}

std::span<std::uint32_t> Core::rng_state(isa::Engine engine, std::uint32_t partition) {
  if (engine == isa::Engine::kVector) {
    const std::size_t words = std::size_t{vector_generators_} * math::kXorwowWords;
    return std::span<std::uint32_t>(vector_rng_).subspan(partition * words, words);
  }
  if (engine == isa::Engine::kGpSimd)
    return std::span<std::uint32_t>(gpsimd_rng_)
        .subspan(partition * math::kXorwowWords, math::kXorwowWords);
  throw SimError(
      fmt::format("the {} engine has no random number generator", isa::engine_name(engine)));
}

namespace {
OnChipMemory& pick(Core& core, isa::Memory memory) {
  if (memory == isa::Memory::kSbuf) return core.sbuf();
  if (memory == isa::Memory::kPsum) return core.psum();
  throw SimError("core access: HBM belongs to the device, not to a core");
}
}  // namespace

void Core::write_onchip(isa::Memory memory, std::uint32_t partition, std::uint64_t offset,
                        std::span<const std::uint8_t> bytes) {
  OnChipMemory& m = pick(*this, memory);
  if (partition >= m.partitions() || offset + bytes.size() > m.bytes_per_partition())
    throw SimError(fmt::format("{} write: partition {} bytes [{}, {}) out of range", m.name(),
                               partition, offset, offset + bytes.size()));
  m.touch(partition, 1, offset, offset + bytes.size());
  std::copy(bytes.begin(), bytes.end(), m.row(partition) + offset);
  m.init().set(m.flat(partition, offset), m.flat(partition, offset) + bytes.size());
}

std::vector<std::uint8_t> Core::read_onchip(isa::Memory memory, std::uint32_t partition,
                                            std::uint64_t offset, std::uint64_t size) const {
  const OnChipMemory& m = pick(const_cast<Core&>(*this), memory);
  if (partition >= m.partitions() || offset + size > m.bytes_per_partition())
    throw SimError(fmt::format("{} read: partition {} bytes [{}, {}) out of range", m.name(),
                               partition, offset, offset + size));
  m.touch(partition, 1, offset, offset + size);
  const std::uint8_t* row = m.row(partition) + offset;
  return std::vector<std::uint8_t>(row, row + size);
}

// ---------------------------------------------------------------------------------------
// Device

Device::Device(arch::ChipConfig chip, int num_cores) : chip_(std::move(chip)) {
  if (num_cores < 1) throw SimError(fmt::format("device: {} cores requested", num_cores));
  if (!(chip_.hbm.capacity_gib.value > 0))
    throw SimError("chip config: hbm.capacity_gib must be positive");
  hbm_ = std::make_unique<Hbm>(arch::hbm_capacity_bytes(chip_));
  for (int i = 0; i < num_cores; ++i) cores_.emplace_back(chip_, i);
}

Device::~Device() = default;

std::uint64_t Device::hbm_capacity() const {
  return hbm_->capacity();
}
std::uint64_t Device::allocate(std::uint64_t bytes, std::uint64_t align) {
  return hbm_->allocate(bytes, align);
}
void Device::allocate_at(std::uint64_t address, std::uint64_t bytes) {
  hbm_->allocate_at(address, bytes);
}
void Device::free(std::uint64_t address) {
  hbm_->free(address);
}

void Device::write(std::uint64_t address, std::span<const std::uint8_t> bytes) {
  if (bytes.empty()) return;
  HbmAllocation* a = hbm_->find(address, address + bytes.size());
  if (a == nullptr)
    throw SimError("hbm write: " +
                   hbm_->describe_miss(static_cast<std::int64_t>(address),
                                       static_cast<std::int64_t>(address + bytes.size())));
  const std::uint64_t local = address - a->address;
  std::copy(bytes.begin(), bytes.end(), a->data() + local);
  a->init().set(local, local + bytes.size());
}

void Device::read(std::uint64_t address, std::span<std::uint8_t> out) const {
  if (out.empty()) return;
  const HbmAllocation* a = hbm_->find(address, address + out.size());
  if (a == nullptr)
    throw SimError("hbm read: " +
                   hbm_->describe_miss(static_cast<std::int64_t>(address),
                                       static_cast<std::int64_t>(address + out.size())));
  const std::uint8_t* data = a->data_if_materialized();
  if (data == nullptr) {  // never accessed: all poison
    std::fill(out.begin(), out.end(), kPoisonByte);
    return;
  }
  const std::uint8_t* first = data + (address - a->address);
  std::copy(first, first + out.size(), out.begin());
}

std::vector<std::uint8_t> Device::read(std::uint64_t address, std::uint64_t size) const {
  std::vector<std::uint8_t> out(size);
  read(address, out);
  return out;
}

bool Device::is_initialized(std::uint64_t address, std::uint64_t size) const {
  const HbmAllocation* a = hbm_->find(address, address + size);
  if (a == nullptr) return false;
  const InitMap* init = a->init_if_materialized();
  if (init == nullptr) return size == 0;  // never accessed
  return init->all_set(address - a->address, address - a->address + size);
}

// ---------------------------------------------------------------------------------------
// Custom operators

namespace {
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, CustomOpEntry>& registry() {
  static std::map<std::string, CustomOpEntry> r;
  return r;
}
}  // namespace

void register_custom_op(const std::string& name, CustomOpFn fn, CustomOpCostFn cost) {
  if (!fn) throw SimError(fmt::format("register_custom_op('{}'): empty function", name));
  std::lock_guard lock(registry_mutex());
  registry()[name] = CustomOpEntry{std::move(fn), std::move(cost)};
}

void unregister_custom_op(const std::string& name) {
  std::lock_guard lock(registry_mutex());
  registry().erase(name);
}

std::optional<CustomOpEntry> find_custom_op(const std::string& name) {
  std::lock_guard lock(registry_mutex());
  auto it = registry().find(name);
  if (it == registry().end()) return std::nullopt;
  return it->second;
}

}  // namespace trnsim::sim
