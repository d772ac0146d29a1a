// Backing stores of the simulated memories (internal to sim): byte arrays that start as a
// poison pattern, with one "initialised" bit per byte.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "util/huge_pages.h"

namespace trnsim::sim {

// Every byte of fresh memory holds this value: 0xFFFFFFFF is a NaN in fp32 (and 0xFFFF in
// bf16/fp16), so a program that ignores the uninitialised-read policy still sees poison.
inline constexpr std::uint8_t kPoisonByte = 0xFF;

// Zeroed storage of `count` T that the operating system backs page by page as it is first
// touched (calloc of a large block maps fresh pages and writes nothing), so that memory a run
// never uses costs no host memory.
template <class T>
class ZeroedArray {
 public:
  ZeroedArray() = default;
  explicit ZeroedArray(std::size_t count)
      : data_(static_cast<T*>(std::calloc(count == 0 ? 1 : count, sizeof(T)))) {
    if (data_ == nullptr) throw std::bad_alloc();
  }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  T& operator[](std::size_t i) { return data_.get()[i]; }
  const T& operator[](std::size_t i) const { return data_.get()[i]; }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> data_;
};

// One bit per byte: has it been written (by the host or by an instruction)?
class InitMap {
 public:
  InitMap() = default;
  explicit InitMap(std::uint64_t bytes) : words_((bytes + 63) / 64) {}
  void set(std::uint64_t lo, std::uint64_t hi);
  // First byte in [lo, hi) never written, or hi when all are.
  std::uint64_t first_unset(std::uint64_t lo, std::uint64_t hi) const;
  bool all_set(std::uint64_t lo, std::uint64_t hi) const { return first_unset(lo, hi) == hi; }

 private:
  ZeroedArray<std::uint64_t> words_;
};

// SBUF or PSUM of one core: `partitions` rows of `bytes_per_partition` bytes, stored
// row-major (byte b of partition p at p * bytes_per_partition + b). The bytes are filled with
// poison a granule (kGranule bytes of the flat array) at a time, when an access first reaches
// it (touch): a core's whole SBUF is tens of MiB, and a run of many ranks uses little of each.
class OnChipMemory {
 public:
  static constexpr std::uint64_t kGranule = 4096;
  OnChipMemory(std::string name, std::uint32_t partitions, std::uint64_t bytes_per_partition);
  const std::string& name() const { return name_; }
  std::uint32_t partitions() const { return partitions_; }
  std::uint64_t bytes_per_partition() const { return bytes_per_partition_; }
  // Bytes [lo, hi) of partitions [first, first + count) hold their contents (poison where
  // never written) from now on: call it before reading or writing them through row().
  void touch(std::uint32_t first, std::uint32_t count, std::uint64_t lo, std::uint64_t hi) const;
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
  // Filling a granule with poison changes nothing a reader can see: touch() is const.
  mutable ZeroedArray<std::uint8_t> data_;
  mutable std::vector<std::uint64_t> poisoned_;  // a bit per granule: filled with poison
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
