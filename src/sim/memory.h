// Backing stores of the simulated memories (internal to sim): byte arrays that start as a
// poison pattern, with one "initialised" bit per byte.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "util/huge_pages.h"

namespace trnsim::sim {

// Every byte of fresh memory holds this value: 0xFFFFFFFF is a NaN in fp32 (and 0xFFFF in
// bf16/fp16), so a program that ignores the uninitialised-read policy still sees poison.
inline constexpr std::uint8_t kPoisonByte = 0xFF;

// One bit per byte: has it been written (by the host or by an instruction)?
class InitMap {
 public:
  InitMap() = default;
  explicit InitMap(std::uint64_t bytes) : words_((bytes + 63) / 64, 0) {}
  void set(std::uint64_t lo, std::uint64_t hi);
  // First byte in [lo, hi) never written, or hi when all are.
  std::uint64_t first_unset(std::uint64_t lo, std::uint64_t hi) const;
  bool all_set(std::uint64_t lo, std::uint64_t hi) const { return first_unset(lo, hi) == hi; }

 private:
  std::vector<std::uint64_t> words_;
};

// SBUF or PSUM of one core: `partitions` rows of `bytes_per_partition` bytes, stored
// row-major (byte b of partition p at p * bytes_per_partition + b).
class OnChipMemory {
 public:
  OnChipMemory(std::string name, std::uint32_t partitions, std::uint64_t bytes_per_partition);
  const std::string& name() const { return name_; }
  std::uint32_t partitions() const { return partitions_; }
  std::uint64_t bytes_per_partition() const { return bytes_per_partition_; }
  std::uint8_t* row(std::uint32_t p) { return data_.data() + p * bytes_per_partition_; }
  const std::uint8_t* row(std::uint32_t p) const { return data_.data() + p * bytes_per_partition_; }
  std::uint64_t flat(std::uint32_t p, std::uint64_t offset) const {
    return p * bytes_per_partition_ + offset;
  }
  InitMap& init() { return init_; }
  const InitMap& init() const { return init_; }

 private:
  std::string name_;
  std::uint32_t partitions_;
  std::uint64_t bytes_per_partition_;
  std::vector<std::uint8_t> data_;
  InitMap init_;
};

// One runtime allocation in HBM.
// One allocation. Its host storage (poison-filled) and initialisation map are created on
// first access: a timing-only run reads and writes no data, so there a large allocation
// (gigabytes of weights) costs no host memory.
struct HbmAllocation {
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
  std::uint64_t size() const { return bytes; }
  std::uint64_t end() const { return address + bytes; }
  bool materialized() const { return storage_.size() == bytes; }
  std::uint8_t* data() {
    materialize();
    return storage_.data();
  }
  InitMap& init() {
    materialize();
    return init_;
  }
  // Read-only access without creating the storage: nullptr while never accessed (every
  // byte then reads as kPoisonByte and is uninitialised).
  const std::uint8_t* data_if_materialized() const {
    return materialized() ? storage_.data() : nullptr;
  }
  const InitMap* init_if_materialized() const { return materialized() ? &init_ : nullptr; }

 private:
  void materialize() {
    if (materialized()) return;
    util::assign_huge(storage_, bytes, kPoisonByte);
    init_ = InitMap(bytes);
  }
  std::vector<std::uint8_t> storage_;
  InitMap init_;
};

// The device's HBM address space: only allocations have storage.
class Hbm {
 public:
  explicit Hbm(std::uint64_t capacity) : capacity_(capacity) {}
  std::uint64_t capacity() const { return capacity_; }
  std::uint64_t allocate(std::uint64_t bytes, std::uint64_t align);
  void allocate_at(std::uint64_t address, std::uint64_t bytes);
  void free(std::uint64_t address);
  // The allocation containing all of [lo, hi), or nullptr.
  HbmAllocation* find(std::uint64_t lo, std::uint64_t hi);
  const HbmAllocation* find(std::uint64_t lo, std::uint64_t hi) const;
  // Human-readable reason why [lo, hi) is not accessible (for error messages).
  std::string describe_miss(std::int64_t lo, std::int64_t hi) const;

 private:
  std::uint64_t capacity_;
  std::map<std::uint64_t, HbmAllocation> allocations_;  // by address
};

}  // namespace trnsim::sim
