#include "sim/core_io.h"

#include <fmt/core.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "numerics/numerics.h"
#include "sim/access.h"
#include "sim/describe.h"
#include "util/huge_pages.h"

namespace trnsim::sim {

namespace {

std::uint64_t mix64(std::uint64_t x) {
  // splitmix64 finaliser: a bijective scrambler, so distinct inputs give distinct seeds.
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::span<const std::byte> as_bytes(const std::uint8_t* p, std::size_t n) {
  return {reinterpret_cast<const std::byte*>(p), n};
}
std::span<std::byte> as_writable_bytes(std::uint8_t* p, std::size_t n) {
  return {reinterpret_cast<std::byte*>(p), n};
}

std::int64_t read_word(const std::uint8_t* p, std::size_t bytes, bool sign_extend) {
  std::uint32_t w = 0;
  std::memcpy(&w, p, bytes);  // little-endian host (checked in executor.cpp)
  if (!sign_extend) return w;
  const unsigned shift = 32u - 8u * static_cast<unsigned>(bytes);
  return static_cast<std::int32_t>(w << shift) >> shift;
}

}  // namespace

CoreOperandIO::CoreOperandIO(Device& device, Core& core, const isa::Instruction& inst,
                             std::size_t index, std::uint32_t seed, UninitializedPolicy policy,
                             const MemoryNamer* namer, std::uint32_t execution)
    : device_(device),
      core_(core),
      inst_(inst),
      index_(index),
      seed_(seed),
      policy_(policy),
      namer_(namer),
      execution_(execution) {
  // Names every operand by the address of its AccessPattern.
  isa::for_each_operand(inst.op, [this](const isa::AccessPattern& ap, const isa::OperandRef& o) {
    field_names_[&ap] = o.label();
  });
}

void CoreOperandIO::fail(const std::string& why) const {
  throw SimError(index_, std::string(isa::op_name(inst_.op)), inst_.origin, why);
}

std::string CoreOperandIO::operand_name(const isa::AccessPattern& ap) const {
  if (auto it = field_names_.find(&ap); it != field_names_.end()) return it->second;
  // A derived view (a row of an operand): name the field it equals or lies in.
  const Footprint f = footprint(ap);
  for (const auto& [address, name] : field_names_) {
    const auto& field = *static_cast<const isa::AccessPattern*>(address);
    if (field == ap || footprint(field).contains(f)) return name;
  }
  return "operand";
}

CoreOperandIO::Rows CoreOperandIO::resolve(const isa::AccessPattern& ap) {
  Rows rows;
  rows.element_bytes = element_bytes(ap);
  rows.free = free_element_count(ap);
  rows.contiguous = free_dims_contiguous(ap);
  rows.offsets = free_element_offsets(ap);
  for (auto& o : rows.offsets) o *= static_cast<std::int64_t>(rows.element_bytes);
  const Footprint f = footprint(ap);
  if (rows.free == 0 || ap.partitions == 0) return rows;

  if (ap.memory == isa::Memory::kHbm) {
    if (f.byte_lo < 0)
      fail(fmt::format("operand '{}': {}", operand_name(ap),
                       device_.hbm().describe_miss(f.byte_lo, f.byte_hi)));
    HbmAllocation* allocation = device_.hbm().find(static_cast<std::uint64_t>(f.byte_lo),
                                                   static_cast<std::uint64_t>(f.byte_hi));
    if (allocation == nullptr)
      fail(fmt::format("operand '{}': {}", operand_name(ap),
                       device_.hbm().describe_miss(f.byte_lo, f.byte_hi)));
    for (std::uint32_t r = 0; r < ap.partitions; ++r) {
      const auto local =
          static_cast<std::uint64_t>(static_cast<std::int64_t>(ap.offset) + hbm_row_offset(ap, r)) -
          allocation->address;
      rows.base.push_back(allocation->data() + local);
      rows.init.push_back(&allocation->init());
      rows.init_base.push_back(local);
    }
    return rows;
  }

  OnChipMemory& memory = ap.memory == isa::Memory::kSbuf ? core_.sbuf() : core_.psum();
  if (ap.start_partition + static_cast<std::uint64_t>(ap.partitions) > memory.partitions())
    fail(fmt::format("operand '{}': partitions [{}, {}) exceed the {} {} partitions",
                     operand_name(ap), ap.start_partition, ap.start_partition + ap.partitions,
                     memory.partitions(), memory.name()));
  if (f.byte_lo < 0 || static_cast<std::uint64_t>(f.byte_hi) > memory.bytes_per_partition())
    fail(fmt::format("operand '{}': bytes [{}, {}) lie outside the {} bytes of a {} partition",
                     operand_name(ap), f.byte_lo, f.byte_hi, memory.bytes_per_partition(),
                     memory.name()));
  memory.touch(ap.start_partition, ap.partitions, static_cast<std::uint64_t>(f.byte_lo),
               static_cast<std::uint64_t>(f.byte_hi));
  for (std::uint32_t r = 0; r < ap.partitions; ++r) {
    const std::uint32_t p = ap.start_partition + r;
    rows.base.push_back(memory.row(p) + ap.offset);
    rows.init.push_back(&memory.init());
    rows.init_base.push_back(memory.flat(p, ap.offset));
  }
  return rows;
}

std::vector<bool> CoreOperandIO::check_initialized(const isa::AccessPattern& ap, const Rows& rows,
                                                   std::uint32_t r) {
  if (policy_ == UninitializedPolicy::kIgnore) return {};
  const InitMap& init = *rows.init[r];
  const std::uint64_t base = rows.init_base[r];
  const std::size_t esize = rows.element_bytes;
  std::uint64_t first_missing = 0;
  bool any_missing = false;
  if (rows.contiguous) {
    const std::uint64_t hi = base + rows.free * esize;
    first_missing = init.first_unset(base, hi);
    any_missing = first_missing != hi;
  } else {
    for (std::uint64_t i = 0; i < rows.free && !any_missing; ++i) {
      const std::uint64_t lo = base + static_cast<std::uint64_t>(rows.offsets[i]);
      first_missing = init.first_unset(lo, lo + esize);
      any_missing = first_missing != lo + esize;
    }
  }
  if (!any_missing) return {};
  if (policy_ == UninitializedPolicy::kError) {
    const std::uint64_t byte = first_missing - base + ap.offset;  // offset within the row
    std::string where, name;
    if (ap.memory == isa::Memory::kHbm) {
      const auto address =
          static_cast<std::uint64_t>(static_cast<std::int64_t>(ap.offset) + hbm_row_offset(ap, r)) +
          (first_missing - base);
      where = fmt::format("hbm address {:#x}", address);
      if (namer_ != nullptr && *namer_) name = (*namer_)(core_.index(), ap.memory, 0, address);
    } else {
      where = fmt::format("{} partition {} byte {}", isa::memory_name(ap.memory),
                          ap.start_partition + r, byte);
      if (namer_ != nullptr && *namer_)
        name = (*namer_)(core_.index(), ap.memory, ap.start_partition + r, byte);
    }
    if (!name.empty()) where += fmt::format(" ({})", name);
    // Most often a missing semaphore: the writer sits on another queue and has not run yet.
    fail(
        fmt::format("operand '{}' reads uninitialised memory: {} was never written (if an "
                    "instruction on another queue writes it, this one needs to wait for it)",
                    operand_name(ap), where));
  }
  std::vector<bool> missing(rows.free, false);
  for (std::uint64_t i = 0; i < rows.free; ++i) {
    const std::uint64_t lo = base + static_cast<std::uint64_t>(rows.offsets[i]);
    missing[i] = !init.all_set(lo, lo + esize);
  }
  return missing;
}

void CoreOperandIO::gather_row(const Rows& rows, std::uint32_t r, std::uint8_t* out) const {
  const std::size_t esize = rows.element_bytes;
  const std::uint8_t* base = rows.base[r];
  if (rows.contiguous) {
    std::memcpy(out, base, rows.free * esize);
    return;
  }
  for (std::uint64_t i = 0; i < rows.free; ++i)
    std::memcpy(out + i * esize, base + rows.offsets[i], esize);
}

void CoreOperandIO::scatter_row(const Rows& rows, std::uint32_t r, const std::uint8_t* in) {
  const std::size_t esize = rows.element_bytes;
  std::uint8_t* base = rows.base[r];
  InitMap& init = *rows.mutable_init(r);
  const std::uint64_t init_base = rows.init_base[r];
  if (rows.contiguous) {
    std::memcpy(base, in, rows.free * esize);
    init.set(init_base, init_base + rows.free * esize);
    return;
  }
  for (std::uint64_t i = 0; i < rows.free; ++i) {
    std::memcpy(base + rows.offsets[i], in + i * esize, esize);
    const std::uint64_t lo = init_base + static_cast<std::uint64_t>(rows.offsets[i]);
    init.set(lo, lo + esize);
  }
}

std::vector<std::uint8_t> CoreOperandIO::load_raw(const isa::AccessPattern& ap,
                                                  std::vector<bool>* missing) {
  const Rows rows = resolve(ap);
  const std::size_t row_bytes = rows.free * rows.element_bytes;
  std::vector<std::uint8_t> out(row_bytes * ap.partitions);
  if (missing != nullptr)
    missing->assign(out.size() / std::max<std::size_t>(1, rows.element_bytes), false);
  for (std::uint32_t r = 0; r < ap.partitions && row_bytes > 0; ++r) {
    const std::vector<bool> row_missing = check_initialized(ap, rows, r);
    if (missing != nullptr)
      for (std::uint64_t i = 0; i < row_missing.size(); ++i)
        (*missing)[r * rows.free + i] = row_missing[i];
    gather_row(rows, r, out.data() + r * row_bytes);
  }
  return out;
}

std::vector<std::uint8_t> CoreOperandIO::load_bytes(const isa::AccessPattern& ap) {
  // Raw bytes have no type to NaN-fill with; under kNanFill the poison pattern stands in.
  return load_raw(ap, nullptr);
}

void CoreOperandIO::store_bytes(const isa::AccessPattern& ap,
                                const std::vector<std::uint8_t>& bytes) {
  const Rows rows = resolve(ap);
  const std::size_t row_bytes = rows.free * rows.element_bytes;
  if (bytes.size() != row_bytes * ap.partitions)
    fail(fmt::format("internal: {} bytes stored into operand '{}' of {} bytes", bytes.size(),
                     operand_name(ap), row_bytes * ap.partitions));
  for (std::uint32_t r = 0; r < ap.partitions && row_bytes > 0; ++r)
    scatter_row(rows, r, bytes.data() + r * row_bytes);
}

std::vector<std::uint8_t> CoreOperandIO::load_bytes_unchecked(const isa::AccessPattern& ap,
                                                              std::vector<bool>& missing) {
  const Rows rows = resolve(ap);
  const std::size_t esize = rows.element_bytes;
  std::vector<std::uint8_t> out(rows.free * esize * ap.partitions);
  missing.assign(rows.free * ap.partitions, false);
  for (std::uint32_t r = 0; r < ap.partitions && rows.free > 0; ++r) {
    gather_row(rows, r, out.data() + r * rows.free * esize);
    for (std::uint64_t i = 0; i < rows.free; ++i) {
      const std::int64_t at =
          rows.contiguous ? static_cast<std::int64_t>(i * esize) : rows.offsets[i];
      const std::uint64_t lo = rows.init_base[r] + static_cast<std::uint64_t>(at);
      missing[r * rows.free + i] = !rows.init[r]->all_set(lo, lo + esize);
    }
  }
  return out;
}

void CoreOperandIO::store_bytes(const isa::AccessPattern& ap,
                                const std::vector<std::uint8_t>& bytes,
                                std::span<const std::pair<std::uint64_t, std::uint64_t>> runs) {
  const Rows rows = resolve(ap);
  const std::size_t esize = rows.element_bytes;
  const std::uint64_t elements = rows.free * ap.partitions;
  if (bytes.size() != elements * esize)
    fail(fmt::format("internal: {} bytes stored into operand '{}' of {} bytes", bytes.size(),
                     operand_name(ap), elements * esize));
  for (const auto& [begin, end] : runs) {
    if (begin > end || end > elements)
      fail(fmt::format("internal: elements [{}, {}) stored into operand '{}' of {}", begin, end,
                       operand_name(ap), elements));
    // Row by row: one copy per row of a contiguous operand, one per element otherwise.
    for (std::uint64_t e = begin; e < end;) {
      const auto r = static_cast<std::uint32_t>(e / rows.free);
      const std::uint64_t i = e % rows.free;
      const std::uint64_t count = rows.contiguous ? std::min(end - e, rows.free - i) : 1;
      const std::int64_t at =
          rows.contiguous ? static_cast<std::int64_t>(i * esize) : rows.offsets[i];
      std::memcpy(rows.base[r] + at, bytes.data() + e * esize, count * esize);
      const std::uint64_t lo = rows.init_base[r] + static_cast<std::uint64_t>(at);
      rows.mutable_init(r)->set(lo, lo + count * esize);
      e += count;
    }
  }
}

Tile CoreOperandIO::load(const isa::AccessPattern& ap) {
  if (numerics::is_mx_packed(ap.dtype))
    fail(fmt::format("operand '{}': x4-packed {} cannot be read as values without its scales",
                     operand_name(ap), numerics::name(ap.dtype)));
  const Rows rows = resolve(ap);
  Tile tile;
  tile.partitions = ap.partitions;
  tile.free = rows.free;
  util::assign_huge(tile.values, static_cast<std::size_t>(ap.partitions) * rows.free);
  const std::size_t esize = rows.element_bytes;
  const float fill = numerics::is_float(ap.dtype) ? std::numeric_limits<float>::quiet_NaN() : 4.0f;
  std::vector<std::uint8_t> staging(rows.contiguous ? 0 : rows.free * esize);
  for (std::uint32_t r = 0; r < ap.partitions && rows.free > 0; ++r) {
    const std::vector<bool> missing = check_initialized(ap, rows, r);
    const std::uint8_t* source = rows.base[r];
    if (!rows.contiguous) {
      gather_row(rows, r, staging.data());
      source = staging.data();
    }
    std::span<float> out(tile.values.data() + r * rows.free, rows.free);
    numerics::decode_bytes(ap.dtype, as_bytes(source, rows.free * esize), out);
    for (std::uint64_t i = 0; i < missing.size(); ++i)
      if (missing[i]) out[i] = fill;
  }
  return tile;
}

void CoreOperandIO::store(const isa::AccessPattern& ap, const Tile& values) {
  if (numerics::is_mx_packed(ap.dtype))
    fail(fmt::format("operand '{}': x4-packed {} cannot be written as values without scales",
                     operand_name(ap), numerics::name(ap.dtype)));
  const Rows rows = resolve(ap);
  if (values.partitions != ap.partitions || values.free != rows.free)
    fail(fmt::format("internal: a [{}, {}] result stored into operand '{}' of shape [{}, {}]",
                     values.partitions, values.free, operand_name(ap), ap.partitions, rows.free));
  numerics::ConvertOptions options;
  options.rounding = inst_.rounding == isa::RoundingMode::kStochastic
                         ? numerics::RoundingMode::kStochastic
                         : numerics::RoundingMode::kNearestEven;
  // A loop's later runs of the instruction draw other numbers; its first run draws what a
  // straight-line program's one run does.
  const std::uint64_t run = execution_ == 0 ? 0 : mix64(~std::uint64_t{execution_});
  options.seed = mix64((std::uint64_t{seed_} << 32) ^ mix64(index_ * 0x10000ull + stores_++) ^ run);
  const std::size_t esize = rows.element_bytes;
  std::vector<std::uint8_t> staging(rows.free * esize);
  for (std::uint32_t r = 0; r < ap.partitions && rows.free > 0; ++r) {
    options.first_index = std::uint64_t{r} * rows.free;
    numerics::encode_bytes(ap.dtype,
                           std::span<const float>(values.values.data() + r * rows.free, rows.free),
                           as_writable_bytes(staging.data(), staging.size()), options);
    scatter_row(rows, r, staging.data());
  }
}

WordTile CoreOperandIO::load_words(const isa::AccessPattern& ap) {
  std::vector<bool> missing;
  const std::vector<std::uint8_t> bytes = load_raw(ap, &missing);
  WordTile tile;
  tile.partitions = ap.partitions;
  tile.free = free_element_count(ap);
  const std::size_t esize = element_bytes(ap);
  const bool sign_extend = numerics::is_integer(ap.dtype) && numerics::info(ap.dtype).is_signed;
  tile.words.resize(bytes.size() / esize);
  for (std::size_t i = 0; i < tile.words.size(); ++i)
    tile.words[i] = read_word(bytes.data() + i * esize, esize, sign_extend);
  // kNanFill: what NKI's simulator puts in fresh allocations, NaN for floats and 4 for ints.
  const bool packed = numerics::is_mx_packed(ap.dtype);
  for (std::size_t i = 0; i < missing.size() && !packed; ++i) {
    if (!missing[i]) continue;
    tile.words[i] =
        numerics::is_float(ap.dtype)
            ? std::int64_t{numerics::encode(ap.dtype, std::numeric_limits<float>::quiet_NaN())}
            : 4;
  }
  return tile;
}

void CoreOperandIO::store_words(const isa::AccessPattern& ap, const WordTile& words) {
  const std::size_t esize = element_bytes(ap);
  if (words.partitions != ap.partitions || words.free != free_element_count(ap))
    fail(fmt::format("internal: a [{}, {}] word result stored into operand '{}' of shape [{}, {}]",
                     words.partitions, words.free, operand_name(ap), ap.partitions,
                     free_element_count(ap)));
  std::vector<std::uint8_t> bytes(words.words.size() * esize);
  for (std::size_t i = 0; i < words.words.size(); ++i) {
    const auto w = static_cast<std::uint32_t>(words.words[i]);  // keep the low storage bytes
    std::memcpy(bytes.data() + i * esize, &w, esize);
  }
  store_bytes(ap, bytes);
}

float CoreOperandIO::scalar(const isa::ScalarOperand& operand, std::uint32_t p) {
  if (const float* immediate = std::get_if<float>(&operand)) return *immediate;
  const auto& ap = std::get<isa::AccessPattern>(operand);
  if (p >= ap.partitions)
    fail(fmt::format("operand '{}': partition {} requested from a [{}, 1] scalar tensor",
                     operand_name(ap), p, ap.partitions));
  auto it = scalar_columns_.find(&ap);
  if (it == scalar_columns_.end()) {
    const Tile tile = load(ap);
    std::vector<float> column(ap.partitions);
    for (std::uint32_t r = 0; r < ap.partitions; ++r)
      column[r] = tile.free == 0 ? 0.0f : tile.values[r * tile.free];
    it = scalar_columns_.emplace(&ap, std::move(column)).first;
  }
  return it->second[p];
}

std::span<std::uint32_t> CoreOperandIO::rng_state(isa::Engine engine, std::uint32_t partition) {
  if (engine != isa::Engine::kVector && engine != isa::Engine::kGpSimd)
    fail(fmt::format("the {} engine has no random number generator", isa::engine_name(engine)));
  if (partition >= core_.sbuf().partitions())
    fail(fmt::format("random number state of lane {} requested; the engine has {} lanes", partition,
                     core_.sbuf().partitions()));
  return core_.rng_state(engine, partition);
}

void CoreOperandIO::seed_rng(isa::Engine engine, std::uint32_t seed) {
  if (engine != isa::Engine::kVector && engine != isa::Engine::kGpSimd)
    fail(fmt::format("the {} engine has no random number generator", isa::engine_name(engine)));
  core_.seed_rng(engine, seed);
}

float& CoreOperandIO::accumulator(std::uint32_t partition) {
  if (partition >= core_.sbuf().partitions())
    fail(fmt::format("accumulator of lane {} requested; the engine has {} lanes", partition,
                     core_.sbuf().partitions()));
  return core_.vector_accumulator(partition);
}

}  // namespace trnsim::sim
