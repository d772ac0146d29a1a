// Tracing: running a kernel callable to record its operations, and the checks made as each
// operation is recorded.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <numeric>
#include <optional>

#include "isa/validate.h"
#include "kernel/kernel.h"
#include "kernel/tracer.h"
#include "util/format_bytes.h"

namespace trnsim::kernel {

namespace {
thread_local Tracer* g_current = nullptr;
std::atomic<std::uint64_t> g_next_serial{1};  // Tracer::serial; 0 is no trace

// Bytes of the elements of `s` from dim `from` on, or nothing when that overflows 2^64.
std::optional<std::uint64_t> bytes_of(const Shape& s, std::size_t from, std::uint64_t elem) {
  std::uint64_t n = elem;
  for (std::size_t d = from; d < s.size(); ++d)
    if (__builtin_mul_overflow(n, static_cast<std::uint64_t>(s[d]), &n)) return std::nullopt;
  return n;
}

// The storages some instruction of `ir` writes.
std::vector<bool> written_storages(const KernelIr& ir) {
  std::vector<bool> written(ir.storages.size(), false);
  for (const IrInstruction& in : ir.instructions)
    isa::for_each_operand(in.inst.op,
                          [&](const isa::AccessPattern& ap, const isa::OperandRef& operand) {
                            const StorageId id = storage_of_offset(ap.offset);
                            if (operand.writes() && id < written.size()) written[id] = true;
                          });
  return written;
}

// A shared_constant is loaded once with the model on hardware, so a kernel writing it would
// see its own writes in later invocations, where trnsim writes the constant afresh for each
// launch: refuse the write at its line.
void require_constants_unwritten(const KernelIr& ir) {
  for (const IrInstruction& in : ir.instructions)
    isa::for_each_operand(
        in.inst.op, [&](const isa::AccessPattern& ap, const isa::OperandRef& operand) {
          const StorageId id = storage_of_offset(ap.offset);
          if (operand.writes() && id < ir.storages.size() &&
              ir.storages[id].role == TensorRole::kConstant)
            throw KernelError(in.inst.origin,
                              fmt::format("{} writes the shared_constant '{}' (a constant is read "
                                          "only: copy it into a tensor of your own)",
                                          isa::op_name(in.inst.op), ir.storages[id].name),
                              {{ir.storages[id].origin, "the constant"}});
        });
}

// An output no program of the launch writes would read back as whatever HBM held (the NaN
// fill): refuse it where the kernel declared it. Outputs are matched by return position, as
// each program returns its own handles to the shared tensors.
void require_outputs_written(const std::vector<KernelIr>& programs) {
  const KernelIr& first = programs.front();
  std::vector<bool> written(first.outputs.size(), false);
  for (const KernelIr& ir : programs) {
    const std::vector<bool> stores = written_storages(ir);
    for (std::size_t k = 0; k < ir.outputs.size() && k < written.size(); ++k)
      if (stores[ir.outputs[k]]) written[k] = true;
  }
  for (std::size_t k = 0; k < written.size(); ++k) {
    if (written[k]) continue;
    const Storage& s = first.storages[first.outputs[k]];
    throw KernelError(s.origin,
                      fmt::format("kernel '{}' returns '{}' but never writes it (no instruction "
                                  "stores to it; it would read back as uninitialised HBM)",
                                  first.name, s.name));
  }
}
}  // namespace

namespace {
thread_local std::optional<isa::Origin> source_override;  // SourceOverride's
}  // namespace

SourceOverride::SourceOverride(isa::Origin where) : previous_(std::move(source_override)) {
  source_override = std::move(where);
}

SourceOverride::~SourceOverride() {
  source_override = std::move(previous_);
}

NoReorder::NoReorder(Loc loc) {
  Tracer& tracer = Tracer::current(loc);
  if (tracer.begin_order_block()) opened_in_ = tracer.serial();
}

NoReorder::~NoReorder() {
  if (opened_in_ != 0 && g_current != nullptr && g_current->serial() == opened_in_)
    g_current->end_order_block();
}

bool Tracer::begin_order_block() {
  if (order_block_ != 0) return false;
  if (in_loop())
    throw KernelError(ir_.loops[innermost_loop() - 1].origin,
                      "no_reorder inside a dynamic loop's body is not supported (NKI 0.6 keeps "
                      "loops out of no_reorder blocks; trnsim keeps the blocks out of loops too)");
  order_block_ = ++order_blocks_;
  return true;
}

isa::Origin origin_of(const Loc& loc) {
  if (source_override) return *source_override;
  return isa::Origin{loc.file_name(), static_cast<std::uint32_t>(loc.line()),
                     static_cast<std::uint32_t>(loc.column())};
}

const Storage& Tracer::storage_of(const Tensor& t, const Loc& loc) const {
  if (!t.valid_)
    throw KernelError(origin_of(loc), "an operand is an invalid (default-constructed) tensor");
  if (t.trace_ != serial_)
    throw KernelError(origin_of(loc),
                      fmt::format("a tensor of another trace is used in kernel '{}' (a tensor "
                                  "kept from an earlier kernel, or from another program of the "
                                  "logical core: each program traces the kernel on its own and "
                                  "must declare its own tensors)",
                                  ir_.name));
  const Storage& s = ir_.storages[t.storage_];
  if (s.loop != 0 && std::find(open_loops_.begin(), open_loops_.end(), s.loop) == open_loops_.end())
    throw KernelError(origin_of(loc),
                      fmt::format("'{}' was declared in the body of a dynamic loop: it is one "
                                  "per trip and not visible after the loop (NKI 0.6)",
                                  s.name),
                      {{s.origin, fmt::format("'{}' declared here", s.name)},
                       {ir_.loops[s.loop - 1].origin, "the loop"}});
  return s;
}

bool tracing() {
  return g_current != nullptr;
}

Tracer::Tracer(const arch::ChipConfig& chip, std::string name, int program_id, int num_programs,
               std::uint64_t max_instructions, std::uint64_t recorded_before)
    : chip_(chip),
      serial_(g_next_serial.fetch_add(1, std::memory_order_relaxed)),
      max_instructions_(max_instructions),
      recorded_before_(recorded_before) {
  ir_.name = std::move(name);
  ir_.program_id = program_id;
  ir_.num_programs = num_programs;
}

Tracer& Tracer::current(const Loc& loc) {
  if (g_current == nullptr)
    throw KernelError(origin_of(loc),
                      "an nl/nisa operation was called outside a kernel being traced "
                      "(run the kernel through kernel::trace or runtime::build)");
  return *g_current;
}

TraceScope::TraceScope(Tracer& tracer) : previous_(g_current) {
  g_current = &tracer;
}
TraceScope::~TraceScope() {
  g_current = previous_;
}

Tensor Tracer::declare(Shape shape, DType dtype, Buffer buffer, std::string name, const Loc& loc,
                       TensorRole role, std::optional<std::uint64_t> fixed_offset) {
  const isa::Origin where = origin_of(loc);
  for (std::int64_t d : shape)
    if (d <= 0)
      throw KernelError(where, fmt::format("tensor shape [{}] has a dim that is not positive",
                                           fmt::join(shape, ", ")));
  const auto id = static_cast<StorageId>(ir_.storages.size());
  if (name.empty()) name = fmt::format("{}{}", is_on_chip(buffer) ? "t" : "hbm", id);
  Storage s{.id = id,
            .buffer = buffer,
            .dtype = dtype,
            .shape = shape,
            .name = std::move(name),
            .origin = where,
            .role = role,
            .fixed_offset = fixed_offset,
            .loop = innermost_loop()};
  const std::uint64_t elem = numerics::storage_bytes(dtype);
  const std::optional<std::uint64_t> bytes = bytes_of(shape, is_on_chip(buffer) ? 1 : 0, elem);
  if (!bytes)
    throw KernelError(where, fmt::format("tensor '{}' [{}] of {} has more than 2^64 bytes", s.name,
                                         fmt::join(shape, ", "), numerics::name(dtype)));
  if (is_on_chip(buffer)) {
    const bool sbuf = buffer == Buffer::kSbuf;
    const auto partitions =
        static_cast<std::int64_t>(sbuf ? chip_.sbuf.partitions.value : chip_.psum.partitions.value);
    const auto capacity = static_cast<std::uint64_t>(sbuf ? chip_.sbuf.bytes_per_partition.value
                                                          : chip_.psum.bytes_per_partition.value);
    if (shape.size() < 2)
      throw KernelError(where,
                        fmt::format("on-chip tile '{}' [{}] needs a partition dim and at least "
                                    "one free dim",
                                    s.name, fmt::join(shape, ", ")));
    if (shape[0] > partitions)
      throw KernelError(where, fmt::format("tile '{}' has {} partitions; {} has {}", s.name,
                                           shape[0], buffer_name(buffer), partitions));
    s.partitions = static_cast<std::uint32_t>(shape[0]);
    s.bytes = *bytes;
    if (s.bytes > capacity)
      throw KernelError(where,
                        fmt::format("tile '{}' needs {} bytes per partition; {} has {} per "
                                    "partition on {}",
                                    s.name, s.bytes, buffer_name(buffer), capacity, chip_.name));
    if (fixed_offset && *fixed_offset + s.bytes > capacity)
      throw KernelError(where, fmt::format("tile '{}' placed at byte {} runs past the {} bytes per "
                                           "partition of {}",
                                           s.name, *fixed_offset, capacity, buffer_name(buffer)));
  } else {
    s.bytes = *bytes;
    const std::uint64_t capacity = arch::hbm_capacity_bytes(chip_);
    if (s.bytes > capacity - std::min(capacity, hbm_bytes_))
      throw KernelError(
          where, fmt::format("HBM tensor '{}' [{}] of {} needs {}; {} has {} of HBM, {} "
                             "of it already declared by this kernel",
                             s.name, fmt::join(shape, ", "), numerics::name(dtype),
                             util::format_bytes(s.bytes), chip_.name, util::format_bytes(capacity),
                             util::format_bytes(hbm_bytes_)));
    hbm_bytes_ += s.bytes;
  }
  ir_.storages.push_back(s);
  return view_of(s.id);
}

Tensor Tracer::view_of(StorageId id) const {
  const Storage& s = ir_.storages.at(id);
  Tensor t;
  t.valid_ = true;
  t.trace_ = serial_;
  t.storage_ = id;
  t.buffer_ = s.buffer;
  t.dtype_ = s.dtype;
  t.shape_ = s.shape;
  t.strides_.assign(s.shape.size(), 0);
  std::int64_t stride = 1;
  const std::size_t first = is_on_chip(s.buffer) ? 1 : 0;
  for (std::size_t d = s.shape.size(); d-- > first;) {
    t.strides_[d] = stride;
    stride *= s.shape[d];
  }
  return t;
}

void Tracer::record(isa::Operation op, const Placement& placement, const Loc& loc) {
  const isa::Origin where = origin_of(loc);
  std::uint8_t engines = isa::op_engines(op);
  if (placement.engine) {
    if ((engines & isa::engine_bit(*placement.engine)) == 0)
      throw KernelError(where, fmt::format("{} cannot run on the {} engine", isa::op_name(op),
                                           isa::engine_name(*placement.engine)));
    engines = isa::engine_bit(*placement.engine);
  }
  // Operands must lie inside their storage; then check the ISA rules with the operands
  // rebased into their storage (a tile is placed later, so only its own bounds matter now).
  isa::Instruction probe;
  probe.op = op;
  probe.rounding = placement.rounding;
  probe.origin = where;
  isa::for_each_operand(probe.op, [&](isa::AccessPattern& ap, const isa::OperandRef& operand) {
    const std::string name = operand.label();
    const StorageId id = storage_of_offset(ap.offset);
    if (id >= ir_.storages.size())
      throw KernelError(where, fmt::format("operand '{}' is not a tensor of this kernel", name));
    const Storage& s = ir_.storages[id];
    ap.offset = offset_in_storage(ap.offset);
    const auto [lo, hi] = ap.byte_span();
    const bool beyond = lo < 0 || static_cast<std::uint64_t>(hi) > s.bytes ||
                        (is_on_chip(s.buffer) && ap.start_partition + ap.partitions > s.partitions);
    if (beyond)
      throw KernelError(
          where,
          fmt::format("operand '{}' reaches outside '{}' (bytes [{}, {}) of {}{})", name, s.name,
                      lo, hi, s.bytes, is_on_chip(s.buffer) ? " per partition" : ""));
  });
  std::uint8_t valid = 0;
  std::vector<isa::Violation> first_violations;
  for (int e = 0; e < isa::kNumEngines; ++e) {
    const auto engine = static_cast<isa::Engine>(e);
    if ((engines & isa::engine_bit(engine)) == 0) continue;
    probe.queue = isa::QueueId{engine, 0};
    auto violations = isa::check_instruction(probe, ir_.instructions.size(), chip_);
    if (violations.empty()) {
      valid |= isa::engine_bit(engine);
    } else if (first_violations.empty()) {
      first_violations = std::move(violations);
    }
  }
  if (valid == 0) {
    // Each broken rule is a note at the same line.
    std::vector<util::Note> rules;
    for (const auto& v : first_violations)
      rules.push_back(
          {where, fmt::format("{}{}", v.operand.empty() ? "" : "operand '" + v.operand + "': ",
                              v.message)});
    throw KernelError(where, fmt::format("{} is not valid on {}", isa::op_name(op), chip_.name),
                      std::move(rules));
  }
  if (recorded_before_ + ir_.instructions.size() >= max_instructions_)
    throw KernelError(
        where, fmt::format("kernel '{}' records more than {} instructions (host memory: about 2 "
                           "KB each to compile and simulate); time a smaller problem, or raise "
                           "TraceOptions::max_instructions",
                           ir_.name, max_instructions_));
  IrInstruction ir_inst;
  ir_inst.inst.op = std::move(op);
  ir_inst.inst.rounding = placement.rounding;
  ir_inst.inst.name = placement.name;
  ir_inst.inst.origin = where;
  for (int e = 0; e < isa::kNumEngines; ++e)
    if (valid & isa::engine_bit(static_cast<isa::Engine>(e))) {
      ir_inst.inst.queue = isa::QueueId{static_cast<isa::Engine>(e), 0};
      break;
    }
  ir_inst.engines = valid;
  ir_inst.engine_fixed = placement.engine.has_value();
  ir_inst.dma_queue = placement.dma_queue;
  ir_inst.order_block = order_block_;
  ir_.instructions.push_back(std::move(ir_inst));
}

namespace {

// Calls visit(first, count) for the runs of consecutive bytes `ap` covers in a storage of
// `partition_bytes` bytes per partition, indexed partition * partition_bytes + byte. Bytes,
// not elements: views of one storage in different dtypes (.ap(dtype=...)) index alike.
// False (nothing visited) when an element falls outside: validation reports that.
template <class Visit>
bool for_each_run(const isa::AccessPattern& ap, std::uint64_t partition_bytes,
                  std::uint32_t partitions, Visit visit) {
  const std::uint64_t elem = ap.element_bytes();
  const std::uint64_t base = offset_in_storage(ap.offset);
  if (base % elem != 0 || ap.start_partition + std::uint64_t{ap.partitions} > partitions)
    return false;
  // byte_span() is in the storage's virtual window: shift it to the storage's own bytes.
  const auto [lo, hi] = ap.byte_span();
  const auto window = static_cast<std::int64_t>(ap.offset - base);
  if (lo < window || hi - window > static_cast<std::int64_t>(partition_bytes)) return false;
  const int last = ap.num_dims - 1;
  const bool unit = ap.dims[static_cast<std::size_t>(last)].step == 1;
  const std::uint64_t run = unit ? ap.dims[static_cast<std::size_t>(last)].count : 1;
  const int outer_dims = unit ? last : ap.num_dims;
  std::array<std::uint32_t, isa::kMaxFreeDims> i{};
  for (std::uint32_t p = ap.start_partition; p < ap.start_partition + ap.partitions; ++p) {
    i.fill(0);
    while (true) {
      std::int64_t e = static_cast<std::int64_t>(base / elem);
      for (int d = 0; d < outer_dims; ++d)
        e += ap.dims[static_cast<std::size_t>(d)].step * i[static_cast<std::size_t>(d)];
      visit(p * partition_bytes + static_cast<std::uint64_t>(e) * elem, run * elem);
      int d = outer_dims - 1;
      while (d >= 0 &&
             ++i[static_cast<std::size_t>(d)] == ap.dims[static_cast<std::size_t>(d)].count)
        i[static_cast<std::size_t>(d--)] = 0;
      if (d < 0) break;
    }
  }
  return true;
}

}  // namespace

bool Tracer::matmul_accumulates(const isa::AccessPattern& dst, const Loc& loc) {
  const StorageId id = storage_of_offset(dst.offset);
  if (id >= ir_.storages.size()) return false;
  const Storage& s = ir_.storages[id];
  std::vector<std::uint8_t>& written = matmul_written_[id];
  written.resize(s.bytes * s.partitions, 0);
  bool any = false, all = true;
  const bool in_bounds =
      for_each_run(dst, s.bytes, s.partitions, [&](std::uint64_t first, std::uint64_t n) {
        const auto* begin = written.data() + first;
        if (std::find(begin, begin + n, std::uint8_t{1}) != begin + n) any = true;
        if (std::find(begin, begin + n, std::uint8_t{0}) != begin + n) all = false;
      });
  if (!in_bounds) return false;
  if (any && !all)
    throw KernelError(origin_of(loc),
                      fmt::format("nc_matmul(accumulate=None) into '{}': some of its PSUM "
                                  "locations were written by an earlier matmul and some were "
                                  "not, and one instruction either overwrites or accumulates "
                                  "(pass accumulate=True or False, or split the matmul)",
                                  s.name));
  note_matmul_write(dst);
  return all && any;
}

void Tracer::note_matmul_write(const isa::AccessPattern& dst) {
  const StorageId id = storage_of_offset(dst.offset);
  if (id >= ir_.storages.size() || ir_.storages[id].buffer != Buffer::kPsum) return;
  const Storage& s = ir_.storages[id];
  std::vector<std::uint8_t>& written = matmul_written_[id];
  written.resize(s.bytes * s.partitions, 0);
  for_each_run(dst, s.bytes, s.partitions, [&](std::uint64_t first, std::uint64_t n) {
    std::fill_n(written.begin() + static_cast<std::ptrdiff_t>(first), n, std::uint8_t{1});
  });
}

namespace {

// The inputs fit the chip's HBM together, before anything is traced (a problem far larger
// than the device would otherwise trace until the host runs out of memory). No location:
// the caller, not the kernel, chose the inputs.
void require_inputs_fit_hbm(std::span<const TensorSpec> inputs, const arch::ChipConfig& chip) {
  const std::uint64_t capacity = arch::hbm_capacity_bytes(chip);
  std::uint64_t total = 0;
  for (const TensorSpec& spec : inputs) {
    for (std::int64_t d : spec.shape)
      if (d <= 0)
        throw KernelError({}, fmt::format("input '{}' has shape [{}]: every dim must be positive",
                                          spec.name, fmt::join(spec.shape, ", ")));
    const std::optional<std::uint64_t> bytes =
        bytes_of(spec.shape, 0, numerics::storage_bytes(spec.dtype));
    if (!bytes || *bytes > capacity - std::min(capacity, total))
      throw KernelError(
          {}, fmt::format("input '{}' [{}] of {} needs {}; {} has {} of HBM{}", spec.name,
                          fmt::join(spec.shape, ", "), numerics::name(spec.dtype),
                          bytes ? util::format_bytes(*bytes) : "more than 2^64 bytes", chip.name,
                          util::format_bytes(capacity),
                          total ? fmt::format(", {} of it taken by the inputs before it",
                                              util::format_bytes(total))
                                : ""));
    total += *bytes;
  }
}

}  // namespace

std::vector<KernelIr> trace(const KernelFn& fn, std::span<const TensorSpec> inputs,
                            const arch::ChipConfig& chip, const TraceOptions& options) {
  const int n = options.num_programs;
  if (n != 1 &&
      std::find(chip.lnc_options.begin(), chip.lnc_options.end(), n) == chip.lnc_options.end())
    throw KernelError({},
                      fmt::format("kernel '{}' launched on {} cores, but {} allows logical core "
                                  "sizes [{}]",
                                  options.name, n, chip.name, fmt::join(chip.lnc_options, ", ")));
  require_inputs_fit_hbm(inputs, chip);
  std::vector<KernelIr> programs;
  std::uint64_t recorded = 0;  // by the programs before this one
  for (int p = 0; p < n; ++p) {
    Tracer tracer(chip, options.name, p, n, options.max_instructions, recorded);
    TraceScope scope(tracer);
    std::vector<Tensor> args;
    for (const TensorSpec& spec : inputs) {
      Tensor t = tracer.declare(spec.shape, spec.dtype, Buffer::kSharedHbm, spec.name,
                                Loc::current(), TensorRole::kInput);
      // Declared by the caller, not at a line of the kernel (nor of this file).
      tracer.ir().storages[t.storage()].origin = {};
      tracer.ir().inputs.push_back(t.storage());
      args.push_back(t);
    }
    std::vector<Tensor> outputs = fn(args);
    for (const Tensor& out : outputs) {
      if (!out.valid())
        throw KernelError({}, fmt::format("kernel '{}' returned an invalid tensor", options.name));
      const StorageId id = tracer.storage_of(out, Loc::current()).id;  // of this trace
      Storage& s = tracer.ir().storages[id];
      if (s.buffer != Buffer::kSharedHbm)
        throw KernelError(s.origin,
                          fmt::format("kernel output '{}' is in {}; outputs must be declared "
                                      "in nl::shared_hbm",
                                      s.name, buffer_name(s.buffer)));
      if (s.role == TensorRole::kConstant)
        throw KernelError(s.origin, fmt::format("kernel '{}' returns its shared_constant '{}' as "
                                                "an output (copy it into a new nl::shared_hbm "
                                                "tensor)",
                                                options.name, s.name));
      if (s.role == TensorRole::kInput)
        throw KernelError({}, fmt::format("kernel '{}' returns its input '{}' as an output (an "
                                          "output must be a new nl::shared_hbm tensor the kernel "
                                          "writes: copy the input into one)",
                                          options.name, s.name));
      s.role = TensorRole::kOutput;
      tracer.ir().outputs.push_back(out.storage());
    }
    recorded += tracer.ir().instructions.size();
    programs.push_back(std::move(tracer.ir()));
  }
  for (const KernelIr& ir : programs) require_constants_unwritten(ir);
  require_outputs_written(programs);
  return programs;
}

}  // namespace trnsim::kernel
