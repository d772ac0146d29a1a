// Registers and dynamic loops (NKI 0.6 nisa.register_*, nl.fori_loop, nl.while_loop): the
// tracer records a loop's body once, as a range of IR instructions (KernelIr::loops), and
// the compiler makes it a loop of the instruction stream (docs/dynamic-loops.md).
#include <fmt/core.h>

#include <algorithm>

#include "kernel/tracer.h"

namespace trnsim::kernel {

namespace {

// Registers the compiler keeps for itself: one per semaphore (a queue's count of signals at
// the start of the current trip) on every queue (compiler/loops.cpp).
int compiler_registers(const arch::ChipConfig& chip) {
  return 5 + static_cast<int>(chip.dma.queues_per_engine.value);
}

}  // namespace

Register Tracer::new_register(const Loc& loc) {
  const int budget = isa::kNumRegisters - compiler_registers(chip_);
  if (ir_.registers >= budget)
    throw KernelError(origin_of(loc),
                      fmt::format("kernel '{}' allocates more than {} registers (each queue has "
                                  "{}; the compiler keeps {} for its semaphore counts)",
                                  ir_.name, budget, isa::kNumRegisters, compiler_registers(chip_)));
  Register r;
  r.valid_ = true;
  r.trace_ = serial_;
  r.index_ = ir_.registers++;
  return r;
}

void Tracer::check_register(const Register& r, const Loc& loc) const {
  if (!r.valid_)
    throw KernelError(origin_of(loc), "an invalid (default-constructed) register is used");
  if (r.trace_ != serial_)
    throw KernelError(origin_of(loc),
                      fmt::format("a register of another trace is used in kernel '{}'", ir_.name));
}

void Tracer::begin_loop(Loop loop, const Loc& loc) {
  const isa::Origin where = origin_of(loc);
  if (order_block_ != 0)
    throw KernelError(where, "a dynamic loop may not sit inside a no_reorder block (NKI 0.6)");
  loop.begin = ir_.instructions.size();
  loop.end = loop.begin;
  loop.parent = innermost_loop();
  loop.origin = where;
  ir_.loops.push_back(std::move(loop));
  open_loops_.push_back(static_cast<std::uint32_t>(ir_.loops.size()));
}

std::optional<std::size_t> Tracer::end_loop() {
  if (open_loops_.empty()) return std::nullopt;
  const std::size_t closed = open_loops_.back() - 1;
  ir_.loops[closed].end = ir_.instructions.size();
  open_loops_.pop_back();
  return closed;
}

void Tracer::add_dependency(std::size_t first, std::size_t end, std::size_t p_first,
                            std::size_t p_end, const Loc& loc) {
  const isa::Origin where = origin_of(loc);
  const std::size_t recorded = ir_.instructions.size();
  if (first > end || end > recorded || p_first > p_end || p_end > recorded)
    throw KernelError(where, "depends_on: an instruction handle of another kernel trace");
  if (first == end || p_first == p_end) return;  // a call that recorded nothing
  if (p_end > first)
    throw KernelError(where,
                      "depends_on: the producer was recorded after the instruction that "
                      "depends on it (a dependency points back in program order)");
  // The innermost loop (index + 1, 0: none) an instruction was recorded in; an open loop's
  // body runs to the end of the trace so far. Loops are in the order they began, so the
  // last one that holds the instruction is the innermost.
  const auto loop_of = [&](std::size_t i) -> std::size_t {
    std::size_t innermost = 0;
    for (std::size_t l = 0; l < ir_.loops.size(); ++l) {
      const bool open =
          std::find(open_loops_.begin(), open_loops_.end(), l + 1) != open_loops_.end();
      if (i >= ir_.loops[l].begin && (open || i < ir_.loops[l].end)) innermost = l + 1;
    }
    return innermost;
  };
  if (loop_of(first) != loop_of(end - 1) || loop_of(p_first) != loop_of(p_end - 1))
    throw KernelError(where,
                      "depends_on: an instruction range that crosses a dynamic loop's "
                      "boundary (name one instruction on each side)");
  const std::size_t producer_loop = loop_of(p_first), consumer_loop = loop_of(first);
  if (producer_loop != 0 && producer_loop != consumer_loop)
    throw KernelError(where,
                      "depends_on: the producer is inside a dynamic loop the dependent "
                      "instruction is not in (its semaphore would fire on every trip or never)",
                      {{ir_.loops[producer_loop - 1].origin, "the producer's loop"}});
  for (std::size_t i = first; i < end; ++i)
    for (std::size_t p = p_first; p < p_end; ++p)
      ir_.instructions[i].after.push_back(static_cast<std::uint32_t>(p));
}

bool Tracer::read_only_register(isa::Reg r) const {
  const auto is = [&](const std::variant<std::int32_t, isa::Reg>& b) {
    return std::holds_alternative<isa::Reg>(b) && std::get<isa::Reg>(b) == r;
  };
  // Every enclosing fori_loop reads its variable and bounds on each of its trips.
  return std::any_of(open_loops_.begin(), open_loops_.end(), [&](std::uint32_t l) {
    const Loop& loop = ir_.loops[l - 1];
    return !loop.is_while && (loop.var == r || is(loop.lower) || is(loop.upper));
  });
}

Tensor Tensor::offset_by(const Register& r, std::int64_t elements, Loc loc) const {
  require_direct("a register offset", loc);
  Tracer& tracer = Tracer::current(loc);
  (void)tracer.storage_of(*this, loc);
  tracer.check_register(r, loc);
  if (dyn_reg_.present() && dyn_reg_ != r.reg())
    throw KernelError(origin_of(loc),
                      fmt::format("a view of '{}' is already offset by another register (an "
                                  "access pattern has one register term)",
                                  name(loc)));
  Tensor out = *this;
  out.dyn_reg_ = r.reg();
  out.dyn_bytes_ += elements * static_cast<std::int64_t>(numerics::storage_bytes(dtype_));
  return out;
}

}  // namespace trnsim::kernel

namespace trnsim::nisa {

using kernel::KernelError;
using kernel::origin_of;
using kernel::Register;
using kernel::Tracer;

namespace {

void record_control(isa::Operation op, const Loc& loc) {
  Tracer::current(loc).record(std::move(op), {}, loc);
}

// dst may be written here: not a fori_loop's variable inside its body.
void check_writable(Tracer& t, const Register& dst, const Loc& loc) {
  t.check_register(dst, loc);
  if (t.read_only_register(dst.reg()))
    throw KernelError(origin_of(loc),
                      "the loop variable and the bounds of fori_loop are read-only inside its "
                      "body (NKI 0.6: the loop controls iteration through them)");
}

}  // namespace

Register register_alloc(std::optional<std::int32_t> value, Loc loc) {
  Tracer& t = Tracer::current(loc);
  const Register r = t.new_register(loc);
  // Registers start at 0 on the device; an explicit set keeps a register allocated inside a
  // loop body at its value on every trip.
  record_control(isa::RegSet{r.reg(), value.value_or(0)}, loc);
  return r;
}

void register_move(const Register& dst, const Register& src, Loc loc) {
  Tracer& t = Tracer::current(loc);
  check_writable(t, dst, loc);
  t.check_register(src, loc);
  record_control(isa::RegAdd{dst.reg(), src.reg(), 0}, loc);
}

void register_move(const Register& dst, std::int32_t value, Loc loc) {
  Tracer& t = Tracer::current(loc);
  check_writable(t, dst, loc);
  record_control(isa::RegSet{dst.reg(), value}, loc);
}

void register_load(const Register& dst, const Tensor& src, Loc loc) {
  Tracer& t = Tracer::current(loc);
  check_writable(t, dst, loc);
  record_control(isa::RegLoad{dst.reg(), src.ap(loc)}, loc);
}

void register_store(const Tensor& dst, const Register& src, Loc loc) {
  Tracer& t = Tracer::current(loc);
  t.check_register(src, loc);
  record_control(isa::RegStore{dst.ap(loc), src.reg()}, loc);
}

}  // namespace trnsim::nisa

namespace trnsim::nl {

using kernel::KernelError;
using kernel::Loop;
using kernel::origin_of;
using kernel::Register;
using kernel::Tracer;

namespace {

std::variant<std::int32_t, isa::Reg> bound_of(Tracer& t, const LoopBound& b, const Loc& loc) {
  if (const auto* r = std::get_if<Register>(&b)) {
    t.check_register(*r, loc);
    return r->reg();
  }
  return std::get<std::int32_t>(b);
}

// Closes the open loop however its body ends (an exception leaves the trace unusable, but
// the tracer must not think a loop is still open).
struct LoopScope {
  Tracer& tracer;
  bool open = true;
  ~LoopScope() {
    if (open) tracer.end_loop();
  }
};

// With both bounds known, the operands the loop variable moves must stay inside their
// storages on the first and the last trip (they move linearly, so the others lie between):
// the simulator checks only the memory's bounds, and a tile past its end is another tile.
void check_moved_operands(Tracer& t, const Loop& loop, std::int64_t first, std::int64_t last) {
  kernel::KernelIr& ir = t.ir();
  for (std::size_t i = loop.begin; i < loop.end; ++i) {
    isa::Operation op = ir.instructions[i].inst.op;
    isa::for_each_operand(op, [&](isa::AccessPattern& ap, const isa::OperandRef& ref) {
      if (ap.dyn_reg != loop.var) return;
      const kernel::Storage& s = ir.storages[kernel::storage_of_offset(ap.offset)];
      for (const std::int64_t value : {first, last}) {
        isa::AccessPattern moved = ap;
        moved.dyn_reg = {};
        moved.offset = kernel::offset_in_storage(ap.offset);
        const std::int64_t shift = value * ap.dyn_scale;
        if (shift < 0 && static_cast<std::uint64_t>(-shift) > moved.offset)
          throw KernelError(ir.instructions[i].inst.origin,
                            fmt::format("operand '{}' starts before '{}' when the loop variable "
                                        "is {}",
                                        ref.label(), s.name, value),
                            {{loop.origin, "the loop"}});
        moved.offset += static_cast<std::uint64_t>(shift);
        const auto [lo, hi] = moved.byte_span();
        if (static_cast<std::uint64_t>(hi) > s.bytes)
          throw KernelError(
              ir.instructions[i].inst.origin,
              fmt::format("operand '{}' reaches outside '{}' when the loop variable is {} (bytes "
                          "[{}, {}) of {}{})",
                          ref.label(), s.name, value, lo, hi, s.bytes,
                          kernel::is_on_chip(s.buffer) ? " per partition" : ""),
              {{loop.origin, "the loop"}});
      }
    });
  }
}

}  // namespace

Register begin_fori_loop(const LoopBound& lower, const LoopBound& upper, std::int32_t step,
                         Loc loc) {
  Tracer& t = Tracer::current(loc);
  if (step <= 0)
    throw KernelError(origin_of(loc),
                      fmt::format("fori_loop: step is a positive int (NKI 0.6), not {}", step));
  Loop loop;
  loop.lower = bound_of(t, lower, loc);
  loop.upper = bound_of(t, upper, loc);
  loop.step = step;
  // The variable is a 32-bit register: past the last trip it must not wrap around, or the
  // loop would go on (with register bounds, the kernel's values must keep to this too).
  const auto* lo = std::get_if<std::int32_t>(&loop.lower);
  const auto* hi = std::get_if<std::int32_t>(&loop.upper);
  if (lo != nullptr && hi != nullptr && *lo < *hi) {
    const std::int64_t trips = (std::int64_t{*hi} - *lo + step - 1) / step;
    if (*lo + trips * step > INT32_MAX)
      throw KernelError(origin_of(loc),
                        fmt::format("fori_loop({}, {}, step={}): the loop variable would pass "
                                    "2^31 - 1 after its last trip (a 32-bit register wraps)",
                                    *lo, *hi, step));
  }
  const Register var = t.new_register(loc);
  loop.var = var.reg();
  t.begin_loop(loop, loc);
  return var;
}

void end_dynamic_loop(Loc loc) {
  Tracer& t = Tracer::current(loc);
  const std::optional<std::size_t> closed = t.end_loop();
  if (!closed) throw KernelError(origin_of(loc), "end_dynamic_loop: no dynamic loop is open");
  const Loop& traced = t.ir().loops[*closed];
  const auto* lo = std::get_if<std::int32_t>(&traced.lower);
  const auto* hi = std::get_if<std::int32_t>(&traced.upper);
  if (!traced.is_while && lo != nullptr && hi != nullptr && *lo < *hi) {
    const std::int64_t trips = (std::int64_t{*hi} - *lo + traced.step - 1) / traced.step;
    check_moved_operands(t, traced, *lo, *lo + (trips - 1) * traced.step);
  }
}

void fori_loop(const LoopBound& lower, const LoopBound& upper,
               const std::function<void(const Register&)>& body, std::int32_t step, Loc loc) {
  const Register var = begin_fori_loop(lower, upper, step, loc);
  Tracer& t = Tracer::current(loc);
  {
    // Closes the loop if the body throws (the trace is lost, but no loop stays open).
    LoopScope scope{t};
    body(var);
    scope.open = false;
  }
  end_dynamic_loop(loc);
}

void while_loop(const Register& init, const std::function<Register(const Register&)>& body,
                Loc loc) {
  Tracer& t = Tracer::current(loc);
  t.check_register(init, loc);
  Loop loop;
  loop.is_while = true;
  loop.var = init.reg();
  t.begin_loop(loop, loc);
  LoopScope scope{t};
  const Register next = body(init);
  t.check_register(next, loc);
  // The loop tests `init`: the body's answer goes there.
  if (next.reg() != init.reg()) nisa::register_move(init, next, loc);
  scope.open = false;
  end_dynamic_loop(loc);
}

}  // namespace trnsim::nl
