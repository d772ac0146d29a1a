#include "sim/tests/test_util.h"

namespace trnsim::sim::testing {

AccessPattern onchip(isa::Memory memory, DType dtype, std::uint32_t start_partition,
                     std::uint32_t partitions, std::uint64_t offset,
                     std::initializer_list<Dim> dims) {
  return isa::access_pattern(memory, dtype, start_partition, partitions, offset, dims);
}

AccessPattern hbm(DType dtype, std::uint64_t address, std::uint32_t rows, std::int64_t row_step,
                  std::initializer_list<Dim> dims) {
  return isa::access_pattern(isa::Memory::kHbm, dtype, 0, rows, address, dims, row_step);
}

isa::Instruction make(isa::QueueId queue, isa::Operation op, std::vector<isa::SemWait> waits,
                      std::vector<isa::SemSignal> signals) {
  isa::Instruction inst;
  inst.op = std::move(op);
  inst.queue = queue;
  inst.waits = std::move(waits);
  inst.signals = std::move(signals);
  return inst;
}

std::uint16_t f32_to_bf16_rne(float f) {
  const std::uint32_t bits = f32_bits(f);
  const std::uint32_t rounding = 0x7FFF + ((bits >> 16) & 1);
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

std::uint32_t TestRng::next() {
  state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
  return static_cast<std::uint32_t>(state_ >> 32);
}

float TestRng::uniform(float lo, float hi) {
  const float unit = static_cast<float>(next() >> 22) * 0x1.0p-10f;  // k / 1024, k < 1024
  return lo + (hi - lo) * unit;
}

int TestRng::integer(int lo, int hi) {
  return lo + static_cast<int>(next() % static_cast<std::uint32_t>(hi - lo + 1));
}

void fill_onchip(Core& core, isa::Memory memory, std::uint32_t start, std::uint32_t rows,
                 std::uint64_t offset, const std::vector<std::uint8_t>& bytes) {
  const std::size_t row_bytes = bytes.size() / rows;
  for (std::uint32_t r = 0; r < rows; ++r)
    core.write_onchip(memory, start + r, offset,
                      std::span<const std::uint8_t>(bytes.data() + r * row_bytes, row_bytes));
}

std::vector<std::uint8_t> read_rows(const Core& core, isa::Memory memory, std::uint32_t start,
                                    std::uint32_t rows, std::uint64_t offset,
                                    std::uint64_t row_bytes) {
  std::vector<std::uint8_t> out;
  for (std::uint32_t r = 0; r < rows; ++r) {
    const auto row = core.read_onchip(memory, start + r, offset, row_bytes);
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

}  // namespace trnsim::sim::testing
