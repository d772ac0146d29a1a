#include "sim/memory.h"

#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <utility>

#include "sim/sim.h"
#include "util/format_bytes.h"

namespace trnsim::sim {

void InitMap::set(std::uint64_t lo, std::uint64_t hi) {
  // Ragged ends bit by bit; whole 64-byte stretches a word at a time (the common case: a
  // contiguous row of an operand).
  while (lo < hi && lo % 64 != 0) {
    const std::uint64_t n = std::min<std::uint64_t>(64 - lo % 64, hi - lo);
    words_[lo / 64] |= ((n == 64 ? ~0ull : (1ull << n) - 1)) << (lo % 64);
    lo += n;
  }
  std::uint64_t word = lo / 64;
  for (; lo + 64 <= hi; lo += 64) words_[word++] = ~0ull;
  if (lo < hi) words_[word] |= (1ull << (hi - lo)) - 1;
}

std::uint64_t InitMap::first_unset(std::uint64_t lo, std::uint64_t hi) const {
  const auto first_in = [&](std::uint64_t word, std::uint64_t mask) {
    return word * 64 + static_cast<std::uint64_t>(std::countr_zero(~words_[word] & mask));
  };
  while (lo < hi && lo % 64 != 0) {
    const std::uint64_t n = std::min<std::uint64_t>(64 - lo % 64, hi - lo);
    const std::uint64_t mask = (n == 64 ? ~0ull : (1ull << n) - 1) << (lo % 64);
    if ((~words_[lo / 64] & mask) != 0) return first_in(lo / 64, mask);
    lo += n;
  }
  std::uint64_t word = lo / 64;
  for (; lo + 64 <= hi; lo += 64, ++word)
    if (words_[word] != ~0ull) return first_in(word, ~0ull);
  if (lo < hi) {
    const std::uint64_t mask = (1ull << (hi - lo)) - 1;
    if ((~words_[word] & mask) != 0) return first_in(word, mask);
  }
  return hi;
}

OnChipMemory::OnChipMemory(std::string name, std::uint32_t partitions,
                           std::uint64_t bytes_per_partition)
    : name_(std::move(name)),
      partitions_(partitions),
      bytes_per_partition_(bytes_per_partition),
      data_(partitions * bytes_per_partition),
      poisoned_((partitions * bytes_per_partition + kGranule * 64 - 1) / (kGranule * 64), 0),
      init_(partitions * bytes_per_partition) {}

void OnChipMemory::touch(std::uint32_t first, std::uint32_t count, std::uint64_t lo,
                         std::uint64_t hi) const {
  if (hi <= lo) return;
  for (std::uint32_t p = first; p < first + count; ++p) {
    const std::uint64_t g_end = (flat(p, hi) + kGranule - 1) / kGranule;
    for (std::uint64_t g = flat(p, lo) / kGranule; g < g_end; ++g) {
      std::uint64_t& word = poisoned_[g / 64];
      const std::uint64_t bit = std::uint64_t{1} << (g % 64);
      if ((word & bit) != 0) continue;
      word |= bit;
      const std::uint64_t begin = g * kGranule;
      const std::uint64_t end = std::min(begin + kGranule, partitions_ * bytes_per_partition_);
      std::fill(data_.data() + begin, data_.data() + end, kPoisonByte);
    }
  }
}

std::uint64_t Hbm::allocate(std::uint64_t bytes, std::uint64_t align) {
  if (bytes == 0) throw SimError("hbm allocate: size 0");
  if (align == 0 || (align & (align - 1)) != 0)
    throw SimError(fmt::format("hbm allocate: alignment {} is not a power of two", align));
  // First fit: walk the gaps between allocations in address order.
  std::uint64_t candidate = 0;
  for (const auto& [address, allocation] : allocations_) {
    candidate = (candidate + align - 1) & ~(align - 1);
    if (candidate + bytes <= address) break;
    candidate = allocation.end();
  }
  candidate = (candidate + align - 1) & ~(align - 1);
  if (candidate + bytes > capacity_)
    throw SimError(fmt::format("hbm allocate: {} ({} bytes) do not fit in the {} of HBM",
                               util::format_bytes(bytes), bytes, util::format_bytes(capacity_)));
  allocate_at(candidate, bytes);
  return candidate;
}

void Hbm::allocate_at(std::uint64_t address, std::uint64_t bytes) {
  if (bytes == 0) throw SimError("hbm allocate: size 0");
  if (address + bytes > capacity_ || address + bytes < address)
    throw SimError(fmt::format("hbm allocate: [{:#x}, {:#x}) exceeds the capacity {:#x} ({})",
                               address, address + bytes, capacity_, util::format_bytes(capacity_)));
  auto next = allocations_.lower_bound(address);
  if (next != allocations_.end() && next->first < address + bytes)
    throw SimError(fmt::format("hbm allocate: [{:#x}, {:#x}) overlaps the allocation at {:#x}",
                               address, address + bytes, next->first));
  if (next != allocations_.begin()) {
    const auto& previous = std::prev(next)->second;
    if (previous.end() > address)
      throw SimError(fmt::format("hbm allocate: [{:#x}, {:#x}) overlaps the allocation at {:#x}",
                                 address, address + bytes, previous.address));
  }
  HbmAllocation allocation;
  allocation.address = address;
  allocation.bytes = bytes;  // storage is created on first access
  allocations_.emplace(address, std::move(allocation));
}

void Hbm::free(std::uint64_t address) {
  if (allocations_.erase(address) == 0)
    throw SimError(fmt::format("hbm free: no allocation starts at {:#x}", address));
}

const HbmAllocation* Hbm::find(std::uint64_t lo, std::uint64_t hi) const {
  auto it = allocations_.upper_bound(lo);
  if (it == allocations_.begin()) return nullptr;
  const HbmAllocation& candidate = std::prev(it)->second;
  return (lo >= candidate.address && hi <= candidate.end()) ? &candidate : nullptr;
}

HbmAllocation* Hbm::find(std::uint64_t lo, std::uint64_t hi) {
  return const_cast<HbmAllocation*>(std::as_const(*this).find(lo, hi));
}

std::string Hbm::describe_miss(std::int64_t lo, std::int64_t hi) const {
  if (lo < 0) return fmt::format("bytes [{}, {}) start below address 0", lo, hi);
  auto it = allocations_.upper_bound(static_cast<std::uint64_t>(lo));
  if (it != allocations_.begin()) {
    const HbmAllocation& candidate = std::prev(it)->second;
    if (static_cast<std::uint64_t>(lo) < candidate.end())
      return fmt::format("bytes [{:#x}, {:#x}) run past the end of the allocation [{:#x}, {:#x})",
                         lo, hi, candidate.address, candidate.end());
  }
  return fmt::format("bytes [{:#x}, {:#x}) are not inside any HBM allocation", lo, hi);
}

}  // namespace trnsim::sim
