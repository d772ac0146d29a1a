#include "ir_builder.h"

#include <cstring>
#include <stdexcept>

#include "sim/timing_model.h"

namespace trnsim::compiler::test {

IrBuilder::IrBuilder(std::string name, int program_id, int num_programs) {
  ir_.name = std::move(name);
  ir_.program_id = program_id;
  ir_.num_programs = num_programs;
}

StorageId IrBuilder::hbm(const std::string& name, DType dtype, std::int64_t rows, std::int64_t cols,
                         kernel::TensorRole role, Buffer buffer, std::uint32_t line) {
  kernel::Storage s;
  s.id = static_cast<StorageId>(ir_.storages.size());
  s.buffer = buffer;
  s.dtype = dtype;
  s.shape = {rows, cols};
  s.bytes = static_cast<std::uint64_t>(rows * cols) * numerics::storage_bytes(dtype);
  s.name = name;
  s.origin = {kFile, line, 1};
  s.role = role;
  ir_.storages.push_back(s);
  if (role == kernel::TensorRole::kInput) ir_.inputs.push_back(s.id);
  if (role == kernel::TensorRole::kOutput) ir_.outputs.push_back(s.id);
  return s.id;
}

StorageId IrBuilder::tile(const std::string& name, Buffer buffer, DType dtype,
                          std::uint32_t partitions, std::uint32_t free, std::uint32_t line) {
  kernel::Storage s;
  s.id = static_cast<StorageId>(ir_.storages.size());
  s.buffer = buffer;
  s.dtype = dtype;
  s.shape = {partitions, free};
  s.partitions = partitions;
  s.bytes = std::uint64_t{free} * numerics::storage_bytes(dtype);
  s.name = name;
  s.origin = {kFile, line, 1};
  ir_.storages.push_back(s);
  return s.id;
}

AccessPattern IrBuilder::t(StorageId id) const {
  const kernel::Storage& s = ir_.storages[id];
  return t(id, 0, s.partitions, 0, static_cast<std::uint32_t>(s.shape[1]));
}

AccessPattern IrBuilder::t(StorageId id, std::uint32_t p0, std::uint32_t np, std::uint64_t e0,
                           std::uint32_t n) const {
  const kernel::Storage& s = ir_.storages[id];
  AccessPattern ap;
  ap.memory = kernel::memory_of(s.buffer);
  ap.dtype = s.dtype;
  ap.offset = kernel::storage_window(id) + e0 * numerics::storage_bytes(s.dtype);
  ap.start_partition = p0;
  ap.partitions = np;
  ap.num_dims = 1;
  ap.dims[0] = {1, n};
  return ap;
}

AccessPattern IrBuilder::h(StorageId id, std::int64_t r0, std::uint32_t nr, std::int64_t c0,
                           std::uint32_t nc) const {
  const kernel::Storage& s = ir_.storages[id];
  AccessPattern ap;
  ap.memory = isa::Memory::kHbm;
  ap.dtype = s.dtype;
  ap.offset = kernel::storage_window(id) +
              static_cast<std::uint64_t>(r0 * s.shape[1] + c0) * numerics::storage_bytes(s.dtype);
  ap.partitions = nr;
  ap.partition_step = s.shape[1];
  ap.num_dims = 1;
  ap.dims[0] = {1, nc};
  return ap;
}

std::size_t IrBuilder::add(isa::Operation op, std::uint32_t line, std::uint8_t engines,
                           bool engine_fixed, std::optional<std::uint8_t> dma_queue) {
  kernel::IrInstruction in;
  in.inst.op = std::move(op);
  in.inst.origin = {kFile, line, 5};
  in.engines = engines ? engines : isa::op_engines(in.inst.op);
  in.engine_fixed = engine_fixed;
  in.dma_queue = dma_queue;
  ir_.instructions.push_back(std::move(in));
  return ir_.instructions.size() - 1;
}

std::size_t IrBuilder::dma(const AccessPattern& dst, const AccessPattern& src, std::uint32_t line) {
  isa::DmaCopy op;
  op.dst = dst;
  op.src = src;
  return add(op, line);
}

std::size_t IrBuilder::matmul(const AccessPattern& dst, const AccessPattern& stationary,
                              const AccessPattern& moving, bool accumulate, std::uint32_t line) {
  isa::NcMatmul op;
  op.dst = dst;
  op.stationary = stationary;
  op.moving = moving;
  op.accumulate = accumulate ? isa::AccumulateMode::kAccumulate : isa::AccumulateMode::kOverwrite;
  return add(op, line);
}

std::size_t IrBuilder::copy(const AccessPattern& dst, const AccessPattern& src, std::uint32_t line,
                            std::uint8_t engines, bool fixed) {
  isa::TensorCopy op;
  op.dst = dst;
  op.src = src;
  return add(op, line, engines, fixed);
}

std::uint16_t bf16_bits(float exact) {
  std::uint32_t bits;
  std::memcpy(&bits, &exact, 4);
  if (bits & 0xFFFFu) throw std::invalid_argument("value not exact in bf16");
  return static_cast<std::uint16_t>(bits >> 16);
}

std::vector<std::uint8_t> encode(DType dtype, std::span<const float> values) {
  std::vector<std::uint8_t> out;
  if (dtype == DType::kBFloat16) {
    out.resize(values.size() * 2);
    for (std::size_t i = 0; i < values.size(); ++i) {
      const std::uint16_t b = bf16_bits(values[i]);
      std::memcpy(out.data() + 2 * i, &b, 2);
    }
  } else if (dtype == DType::kFloat32) {
    out.resize(values.size() * 4);
    std::memcpy(out.data(), values.data(), out.size());
  } else {
    throw std::invalid_argument("test encode: bf16/fp32 only");
  }
  return out;
}

std::vector<float> decode_f32(std::span<const std::uint8_t> bytes) {
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), out.size() * 4);
  return out;
}

std::size_t placement_index(const CompiledKernel& k, const std::string& name) {
  for (std::size_t i = 0; i < k.hbm.size(); ++i)
    if (k.hbm[i].name == name) return i;
  throw std::invalid_argument("no HBM placement named " + name);
}

const HbmPlacement& placement(const CompiledKernel& k, const std::string& name) {
  return k.hbm[placement_index(k, name)];
}

RunOutcome run_compiled(
    const CompiledKernel& k, const arch::ChipConfig& chip,
    const std::vector<std::pair<std::string, std::vector<std::uint8_t>>>& inputs, bool timed) {
  sim::Device device(chip);
  for (const HbmPlacement& p : k.hbm)
    device.allocate_at(p.address, std::max<std::uint64_t>(p.bytes, 1));
  for (const auto& [name, bytes] : inputs) device.write(placement(k, name).address, bytes);
  sim::TimingModel model(chip);
  sim::RunOptions options;
  options.check_hazards = true;
  if (timed) options.cost_model = &model;
  RunOutcome out;
  out.result = sim::run(device, k.programs.at(0), options);
  if (timed) {
    const sim::TimingReport report = model.report(k.programs.at(0), out.result);
    for (const sim::QueueTiming& q : report.queues) out.busy_sum_ns += q.busy_ns;
  }
  for (const HbmPlacement& p : k.hbm) {
    if (device.is_initialized(p.address, p.bytes))
      out.tensors.push_back(device.read(p.address, p.bytes));
    else
      out.tensors.emplace_back();
  }
  return out;
}

}  // namespace trnsim::compiler::test
