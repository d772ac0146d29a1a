// OperandIO over a core's memories and the device HBM (internal to sim).
//
// One object per executing instruction. Every read is bounds-checked and checked for
// uninitialised bytes (per the run's policy), every write marks bytes initialised, and
// stores round with the instruction's rounding mode; stochastic rounding is seeded from
// (program seed, instruction index, store number) so results never depend on run order.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sim/memory.h"
#include "sim/operand_io.h"
#include "sim/sim.h"

namespace trnsim::sim {

class CoreOperandIO final : public OperandIO {
 public:
  // `namer` (may be null or empty) names the data of an uninitialised read in its error;
  // `execution` counts the earlier runs of the instruction (in a loop), so that each run's
  // stochastic rounding draws its own numbers.
  CoreOperandIO(Device& device, Core& core, const isa::Instruction& inst, std::size_t index,
                std::uint32_t seed, UninitializedPolicy policy, const MemoryNamer* namer = nullptr,
                std::uint32_t execution = 0);

  Tile load(const isa::AccessPattern& ap) override;
  void store(const isa::AccessPattern& ap, const Tile& values) override;
  WordTile load_words(const isa::AccessPattern& ap) override;
  void store_words(const isa::AccessPattern& ap, const WordTile& words) override;
  float scalar(const isa::ScalarOperand& operand, std::uint32_t p) override;
  std::span<std::uint32_t> rng_state(isa::Engine engine, std::uint32_t partition) override;
  void seed_rng(isa::Engine engine, std::uint32_t seed) override;
  float& accumulator(std::uint32_t partition) override;
  const isa::Instruction& instruction() const override { return inst_; }

  // Raw storage bytes of an operand, `partitions x free x element size`, row-major (for
  // bit-exact moves and the MX data path). Same checks as load().
  std::vector<std::uint8_t> load_bytes(const isa::AccessPattern& ap);
  void store_bytes(const isa::AccessPattern& ap, const std::vector<std::uint8_t>& bytes);
  // Raw bytes and, in `missing`, which elements were never written, with no error for them:
  // for an operand the instruction reads only part of (the caller checks that part).
  std::vector<std::uint8_t> load_bytes_unchecked(const isa::AccessPattern& ap,
                                                 std::vector<bool>& missing);
  // Only the [begin, end) element ranges `runs` of `bytes` (all of the operand's bytes, in
  // element order); the rest of the operand keeps its data.
  void store_bytes(const isa::AccessPattern& ap, const std::vector<std::uint8_t>& bytes,
                   std::span<const std::pair<std::uint64_t, std::uint64_t>> runs);

  UninitializedPolicy policy() const { return policy_; }
  // Raises a SimError about this instruction.
  [[noreturn]] void fail(const std::string& why) const;
  // Name of the operand field an access pattern belongs to ("dst", "moving", ...).
  std::string operand_name(const isa::AccessPattern& ap) const;

 private:
  // Where an operand's rows live once bounds are checked.
  struct Rows {
    std::vector<std::uint8_t*> base;  // first byte of each row's element 0 (offset 0)
    std::vector<const InitMap*> init;
    std::vector<std::uint64_t> init_base;  // InitMap index of each row's base
    std::vector<std::int64_t> offsets;     // byte offsets of the free elements in a row
    bool contiguous = false;
    std::size_t element_bytes = 0;
    std::uint64_t free = 0;
    InitMap* mutable_init(std::uint32_t r) const { return const_cast<InitMap*>(init[r]); }
  };
  Rows resolve(const isa::AccessPattern& ap);
  // Applies the uninitialised-read policy to row r; returns a mask of elements to replace
  // (empty when none) after reporting or ignoring.
  std::vector<bool> check_initialized(const isa::AccessPattern& ap, const Rows& rows,
                                      std::uint32_t r);
  std::vector<std::uint8_t> load_raw(const isa::AccessPattern& ap, std::vector<bool>* missing);
  void gather_row(const Rows& rows, std::uint32_t r, std::uint8_t* out) const;
  void scatter_row(const Rows& rows, std::uint32_t r, const std::uint8_t* in);

  Device& device_;
  Core& core_;
  const isa::Instruction& inst_;
  std::size_t index_;
  std::uint32_t seed_;
  UninitializedPolicy policy_;
  const MemoryNamer* namer_;
  std::uint32_t execution_ = 0;
  std::uint32_t stores_ = 0;
  std::map<const isa::AccessPattern*, std::vector<float>> scalar_columns_;
  std::map<const void*, std::string> field_names_;
};

}  // namespace trnsim::sim
