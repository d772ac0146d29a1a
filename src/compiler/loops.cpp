// Programs with registers or dynamic loops (docs/compiler.md, "Dynamic loops"): compiled
// piece by piece. A piece is a straight run of data-path instructions (scheduled and
// synchronised as any program), one register operation, or a loop's head or tail. Every
// queue the program uses runs every register operation, loop head and tail, so all queues
// agree on the trip counts. Semaphore counts grow by an unknown amount per loop, so each queue
// keeps in register R(q) the count of queue q's signals (less a lag known at compile time)
// and waits relative to it; every instruction of a straight piece signals, so the counts per
// piece are static. A straight piece starts on each queue with a fence (every signal so far,
// on every queue), which orders it after everything before it. A loop whose body is one
// straight piece has no fence inside: each instruction waits for the previous trip's
// instructions it conflicts with, so the trips overlap.
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <stdexcept>

#include "compiler/passes.h"

namespace trnsim::compiler::detail {

bool has_control_flow(const KernelIr& ir) {
  if (!ir.loops.empty()) return true;
  return std::any_of(ir.instructions.begin(), ir.instructions.end(), [](const IrInstruction& in) {
    return isa::op_class(in.inst.op) == isa::OpClass::kControl;
  });
}

void extend_lifetimes_over_loops(const KernelIr& ir, std::vector<Lifetime>& life) {
  // Loop `inner` (index + 1; 0: none) is loop `outer` or lies in its body.
  const auto within = [&](std::uint32_t inner, std::size_t outer) {
    for (std::uint32_t l = inner; l != 0; l = ir.loops[l - 1].parent)
      if (l - 1 == outer) return true;
    return false;
  };
  for (std::size_t k = 0; k < ir.loops.size(); ++k) {
    const kernel::Loop& loop = ir.loops[k];
    if (loop.begin == loop.end) continue;
    for (const Storage& s : ir.storages) {
      Lifetime& l = life[s.id];
      // A tile declared in the body (or in a loop inside it) is one per trip; one declared
      // outside and used in it is read again by the next trip, so it lives through the
      // whole loop.
      if (l.first == kNone || within(s.loop, k) || l.last < loop.begin || l.first >= loop.end)
        continue;
      l.first = std::min(l.first, loop.begin);
      l.last = std::max(l.last, loop.end - 1);
    }
  }
}

namespace {

enum class PieceKind : std::uint8_t { kStraight, kControl, kHead, kTail };
struct Piece {
  PieceKind kind = PieceKind::kStraight;
  std::size_t begin = 0, end = 0;  // IR instructions (kStraight, kControl)
  std::size_t loop = 0;            // kHead, kTail
};

std::vector<Piece> pieces_of(const KernelIr& ir) {
  const std::size_t n = ir.instructions.size();
  std::vector<Piece> out;
  std::size_t run = 0, next_loop = 0;
  std::vector<std::size_t> open;  // the loops whose bodies are being walked, outermost first
  const auto flush = [&](std::size_t i) {
    if (run < i) out.push_back({PieceKind::kStraight, run, i, 0});
    run = i;
  };
  for (std::size_t i = 0; i <= n; ++i) {
    // Heads and tails at i: a loop that begins here inside the innermost open one opens
    // first (even when both bodies end here); otherwise the innermost loop ending here closes.
    for (;;) {
      const std::uint32_t innermost =
          open.empty() ? 0 : static_cast<std::uint32_t>(open.back() + 1);
      if (next_loop < ir.loops.size() && ir.loops[next_loop].begin == i &&
          ir.loops[next_loop].parent == innermost) {
        flush(i);
        out.push_back({PieceKind::kHead, 0, 0, next_loop});
        open.push_back(next_loop++);
      } else if (!open.empty() && ir.loops[open.back()].end == i) {
        flush(i);
        out.push_back({PieceKind::kTail, 0, 0, open.back()});
        open.pop_back();
      } else {
        break;
      }
    }
    if (i == n) break;
    if (isa::op_class(ir.instructions[i].inst.op) == isa::OpClass::kControl) {
      flush(i);
      out.push_back({PieceKind::kControl, i, i + 1, 0});
      run = i + 1;
    }
  }
  flush(n);
  return out;
}

// Whether two storages may share bytes: the same one, or two tiles the allocator placed over
// the same range of one memory (one reusing the other's space).
bool may_share(const KernelIr& ir, const Allocation& alloc, StorageId a, StorageId b) {
  if (a == b) return true;
  const Storage& x = ir.storages[a];
  const Storage& y = ir.storages[b];
  if (!kernel::is_on_chip(x.buffer) || x.buffer != y.buffer) return false;
  const TilePlace& p = alloc.places[a];
  const TilePlace& q = alloc.places[b];
  return p.placed && q.placed && p.offset < q.offset + q.size && q.offset < p.offset + p.size;
}

// A register-relative operand moves at run time, so the dependency pass's footprints (at
// register value 0) cannot say what it overlaps: it is ordered against every other access
// in the piece of its storage or of a tile placed over the same bytes.
void order_moved_operands(const KernelIr& piece, const Allocation& alloc,
                          std::vector<std::vector<std::uint32_t>>& preds,
                          std::vector<std::vector<std::uint32_t>>& flow) {
  struct Use {
    StorageId storage;
    bool writes, moved;
  };
  std::vector<std::vector<Use>> uses(piece.instructions.size());
  bool any_moved = false;
  for (std::size_t i = 0; i < piece.instructions.size(); ++i)
    isa::for_each_operand(
        piece.instructions[i].inst.op, [&](const AccessPattern& ap, const isa::OperandRef& ref) {
          uses[i].push_back({kernel::storage_of_offset(ap.offset), ref.writes(), ap.is_dynamic()});
          any_moved = any_moved || ap.is_dynamic();
        });
  if (!any_moved) return;
  for (std::size_t i = 0; i < uses.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      for (const Use& a : uses[j])
        for (const Use& b : uses[i]) {
          if (!(a.moved || b.moved) || !(a.writes || b.writes) ||
              !may_share(piece, alloc, a.storage, b.storage))
            continue;
          preds[i].push_back(static_cast<std::uint32_t>(j));
          if (a.writes && !b.writes) flow[i].push_back(static_cast<std::uint32_t>(j));
        }
  for (auto* lists : {&preds, &flow})
    for (auto& list : *lists) {
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());
    }
}

// One straight piece, scheduled and synchronised on its own (waits count from the piece's
// start; every instruction signals).
struct ScheduledPiece {
  std::vector<isa::Instruction> program;  // in issue order, queues assigned
  std::vector<int> queue;                 // queue key of each
  std::vector<std::uint32_t> order;       // piece-relative IR index of each
  double estimated_ns = 0;
  std::size_t cross_edges = 0;
  // A loop body overlapping its trips: no fence; each instruction (issue order) also waits
  // for the previous trip's instructions it conflicts with: (semaphore, offset from R).
  bool fenced = true;
  std::vector<std::vector<std::pair<int, std::int32_t>>> carried;
};

class Emitter {
 public:
  Emitter(const KernelIr& ir, std::vector<int> queues, int num_queues)
      : ir_(ir),
        queues_(std::move(queues)),
        labels_(static_cast<std::size_t>(num_queues)),
        counts_(static_cast<std::size_t>(num_queues), 0),
        lag_(static_cast<std::size_t>(num_queues) * static_cast<std::size_t>(num_queues), 0) {}

  std::vector<isa::Instruction>& program() { return out_; }

  // R(q): queue q's signals before the current piece, as every queue counts them.
  isa::Reg base(int q) const { return isa::Reg{static_cast<std::uint8_t>(ir_.registers + q)}; }

  void straight(ScheduledPiece& piece) {
    std::vector<char> fenced(labels_.size(), piece.fenced ? 0 : 1);
    for (std::size_t k = 0; k < piece.program.size(); ++k) {
      isa::Instruction& inst = piece.program[k];
      const int q = piece.queue[k];
      std::map<std::uint16_t, std::int32_t> waits;  // semaphore -> offset from its base
      const auto need = [&](int sem, std::int32_t offset) {
        const auto at = waits.try_emplace(static_cast<std::uint16_t>(sem), offset).first;
        at->second = std::max(at->second, offset);
      };
      for (const isa::SemWait& w : inst.waits) need(w.sem, static_cast<std::int32_t>(w.value));
      if (!piece.carried.empty())
        for (const auto& [sem, offset] : piece.carried[k]) need(sem, offset);
      if (!fenced[static_cast<std::size_t>(q)]) {
        fenced[static_cast<std::size_t>(q)] = 1;
        for (const int s : queues_) need(s, 0);
      }
      inst.waits.clear();
      for (const auto& [sem, offset] : waits)
        inst.waits.push_back({sem, static_cast<std::uint32_t>(offset + lag(q, sem)), base(sem)});
      inst.signals = {{static_cast<std::uint16_t>(q), 1}};
      ++counts_[static_cast<std::size_t>(q)];
      emit(std::move(inst), q);
    }
    advance();
  }

  // A register operation of the kernel: on every queue; one that touches memory waits for
  // everything before it and signals, so that what follows waits for it in turn.
  void control(const isa::Instruction& inst) {
    const bool stores = std::holds_alternative<isa::RegStore>(inst.op);
    const bool loads = std::holds_alternative<isa::RegLoad>(inst.op);
    for (const int q : queues_) {
      isa::Instruction copy = inst;
      if (loads || stores) {
        copy.waits = fence(q);
        copy.signals = {{static_cast<std::uint16_t>(q), 1}};
        ++counts_[static_cast<std::size_t>(q)];
      }
      emit(std::move(copy), q);
      if (stores) break;  // one store is enough: every queue holds the same value
    }
    advance();
  }

  // `fence`: the head waits for everything before the loop (its body, overlapping its
  // trips, has no fence of its own).
  void head(const kernel::Loop& loop, bool fence) {
    // Each trip must start with the lag it had on entry: the tail adds the trip's signals.
    OpenLoop& open = open_.emplace_back();
    open.lag_at_head = lag_;
    open.head_branch.assign(labels_.size(), 0);
    open.body_start.assign(labels_.size(), 0);
    for (const int q : queues_) {
      if (!loop.is_while) {
        if (const auto* lower = std::get_if<std::int32_t>(&loop.lower)) {
          emit(make(isa::RegSet{loop.var, *lower}, loop), q);
        } else {
          emit(make(isa::RegAdd{loop.var, std::get<isa::Reg>(loop.lower), 0}, loop), q);
        }
      }
      open.head_branch[static_cast<std::size_t>(q)] = out_.size();
      isa::Instruction leave = make(leave_or_stay(loop, true), loop);
      if (fence) leave.waits = this->fence(q);
      emit(std::move(leave), q);
      request_label(q, &open.body_start[static_cast<std::size_t>(q)]);
    }
  }

  // Closes the innermost open loop (loops nest: a tail closes the last head).
  void tail(const kernel::Loop& loop) {
    OpenLoop& open = open_.back();
    for (const int q : queues_) {
      const auto at = static_cast<std::size_t>(q);
      catch_up(q, open.lag_at_head);  // the next trip, and the exit, lag as the loop's entry
      if (!loop.is_while) emit(make(isa::RegAdd{loop.var, loop.var, loop.step}, loop), q);
      // A body with nothing on this queue: the back edge is the branch itself.
      auto& pending = labels_[at];
      if (std::find(pending.begin(), pending.end(), &open.body_start[at]) != pending.end()) {
        pending.clear();
        open.body_start[at] = out_.size();
      }
      isa::Branch back = leave_or_stay(loop, false);
      back.target = static_cast<std::uint32_t>(open.body_start[at]);
      emit(make(back, loop), q);
      // The head leaves to the queue's next instruction after the loop.
      exits_.push_back({open.head_branch[at], 0});
      request_label(q, &exits_.back().target);
    }
    open_.pop_back();
  }

  // Every queue ends on a `sem`, so that a loop at the end of the program has somewhere to
  // leave to; then the heads' exits are patched.
  void finish() {
    for (const int q : queues_) emit(make(isa::SemaphoreOp{}, {}), q);
    for (const Exit& e : exits_)
      std::get<isa::Branch>(out_[e.branch].op).target = static_cast<std::uint32_t>(e.target);
  }

 private:
  static isa::Instruction make(isa::Operation op, const kernel::Loop& loop) {
    isa::Instruction inst;
    inst.op = std::move(op);
    inst.origin = loop.origin;
    return inst;
  }

  // fori: leave when var >= upper (head), stay while var < upper (tail); while: leave when
  // var == 0, stay while var != 0.
  static isa::Branch leave_or_stay(const kernel::Loop& loop, bool leave) {
    isa::Branch b;
    b.a = loop.var;
    if (loop.is_while) {
      b.cond = leave ? isa::BranchCond::kEqual : isa::BranchCond::kNotEqual;
      return b;
    }
    b.cond = leave ? isa::BranchCond::kGreaterEqual : isa::BranchCond::kLess;
    if (const auto* upper = std::get_if<std::int32_t>(&loop.upper)) {
      b.imm = *upper;
    } else {
      b.b = std::get<isa::Reg>(loop.upper);
    }
    return b;
  }

  // Every signal so far on every queue, as queue q's waits.
  std::vector<isa::SemWait> fence(int q) const {
    std::vector<isa::SemWait> waits;
    for (const int s : queues_)
      waits.push_back(
          {static_cast<std::uint16_t>(s), static_cast<std::uint32_t>(lag(q, s)), base(s)});
    return waits;
  }

  // How far queue q's R(s) lags the count it stands for: signals of pieces since q last
  // added to it. Outside loops these are known, so waits add them instead of q spending a
  // reg_add per piece and semaphore. A loop's tail adds the trip's signals (catch_up to the
  // lag at the head), so that every trip, and both ways out of the loop, lag alike.
  std::int32_t lag(int q, int s) const {
    return lag_[static_cast<std::size_t>(q) * counts_.size() + static_cast<std::size_t>(s)];
  }

  // Queue q adds to its bases until each lags by `target` (zero: exact).
  void catch_up(int q, const std::vector<std::int32_t>& target) {
    for (std::size_t s = 0; s < counts_.size(); ++s) {
      const std::size_t at = static_cast<std::size_t>(q) * counts_.size() + s;
      const std::int32_t add_now = lag_[at] - (target.empty() ? 0 : target[at]);
      if (add_now == 0) continue;
      const isa::Reg r = base(static_cast<int>(s));
      isa::Instruction add;
      add.op = isa::RegAdd{r, r, add_now};
      emit(std::move(add), q);
      lag_[at] -= add_now;
    }
  }

  // The signals of the piece just emitted, in every queue's lag.
  void advance() {
    for (const int q : queues_) {
      bool far_behind = false;
      for (std::size_t s = 0; s < counts_.size(); ++s) {
        std::int32_t& behind = lag_[static_cast<std::size_t>(q) * counts_.size() + s];
        behind += static_cast<std::int32_t>(counts_[s]);
        far_behind = far_behind || behind > (1 << 30);
      }
      if (far_behind) catch_up(q, {});  // offsets stay 32-bit
    }
    std::fill(counts_.begin(), counts_.end(), 0);
  }

  void request_label(int q, std::size_t* slot) {
    labels_[static_cast<std::size_t>(q)].push_back(slot);
  }

  void emit(isa::Instruction inst, int q) {
    inst.queue = queue_of_key(q);
    auto& pending = labels_[static_cast<std::size_t>(q)];
    for (std::size_t* slot : pending) *slot = out_.size();
    pending.clear();
    out_.push_back(std::move(inst));
  }

  struct Exit {
    std::size_t branch = 0, target = 0;
  };
  // A loop whose head is emitted and tail is not: per queue, its head's branch and its
  // body's start, and every queue's lag when it was entered.
  struct OpenLoop {
    std::vector<std::int32_t> lag_at_head;
    std::vector<std::size_t> head_branch, body_start;
  };
  const KernelIr& ir_;
  std::vector<int> queues_;
  std::vector<std::vector<std::size_t*>> labels_;  // per queue: slots its next instruction fills
  std::vector<std::uint32_t> counts_;              // signals per queue in the current piece
  std::vector<std::int32_t> lag_;                  // [queue][semaphore]: see lag()
  std::vector<isa::Instruction> out_;
  std::deque<OpenLoop> open_;  // innermost last; a deque: labels point into its body_start
  std::deque<Exit> exits_;     // a deque: labels point into it
};

// Schedules and synchronises one straight piece on its own.
ScheduledPiece schedule_piece(const KernelIr& ir, const Piece& piece,
                              const std::vector<isa::Instruction>& phys,
                              const std::vector<std::uint8_t>& allowed, const Allocation& alloc,
                              const arch::ChipConfig& chip, const CompileOptions& options,
                              int num_queues) {
  const auto begin = static_cast<std::ptrdiff_t>(piece.begin);
  const auto end = static_cast<std::ptrdiff_t>(piece.end);
  KernelIr sub;
  sub.name = ir.name;
  sub.storages = ir.storages;
  sub.registers = ir.registers;
  sub.instructions.assign(ir.instructions.begin() + begin, ir.instructions.begin() + end);
  // The kernel's depends_on edges in piece indices: those from an earlier piece are kept by the
  // fence every piece starts with (an overlapped loop body: the loop head's).
  for (IrInstruction& in : sub.instructions) {
    std::vector<std::uint32_t> local;
    for (const std::uint32_t p : in.after)
      if (p >= piece.begin) local.push_back(static_cast<std::uint32_t>(p - piece.begin));
    in.after = std::move(local);
  }
  std::vector<isa::Instruction> sub_phys(phys.begin() + begin, phys.begin() + end);
  const std::vector<std::uint8_t> sub_allowed(allowed.begin() + begin, allowed.begin() + end);
  std::vector<std::vector<std::uint32_t>> flow;
  auto preds = dependencies(sub, sub_phys, alloc, flow);
  order_moved_operands(sub, alloc, preds, flow);
  const SchedResult sched = schedule_ir(sub, sub_phys, sub_allowed, preds, chip, options);
  SyncResult sync = synchronise(sub_phys, sched, preds, flow, num_queues, true);
  ScheduledPiece out;
  out.program = std::move(sync.program);
  for (const std::uint32_t i : sched.order) out.queue.push_back(sched.queue[i]);
  out.order = sched.order;
  out.estimated_ns = sched.estimated_ns;
  out.cross_edges = sync.cross_edges;
  return out;
}

// An instruction's operands as the trip-to-trip check needs them: storage and role from the
// IR, the placed pattern from the physical instruction; a barrier (no operands) orders all.
struct TripOperand {
  StorageId storage;
  const AccessPattern* placed;
  bool writes, moved;
};
struct TripAccesses {
  std::vector<TripOperand> operands;
  bool barrier = false;
  isa::EngineState state = isa::EngineState::kNone;  // engine-held state it uses
};
TripAccesses trip_accesses(const KernelIr& ir, const std::vector<isa::Instruction>& phys,
                           std::size_t x) {
  TripAccesses out;
  // A sendrecv or collective meets other cores' calls in order: trips keep them in order
  // (as a barrier does) so that no trip's exchange overtakes the last trip's.
  out.barrier =
      std::holds_alternative<isa::CoreBarrier>(phys[x].op) || isa::meets_other_cores(phys[x].op);
  out.state = isa::engine_state(phys[x].op);
  isa::for_each_operand(
      ir.instructions[x].inst.op, [&](const AccessPattern& ap, const isa::OperandRef& ref) {
        out.operands.push_back(
            {kernel::storage_of_offset(ap.offset), nullptr, ref.writes(), ap.is_dynamic()});
      });
  std::size_t k = 0;
  isa::for_each_operand(phys[x].op, [&](const AccessPattern& ap, const isa::OperandRef&) {
    if (k < out.operands.size()) out.operands[k].placed = &ap;
    ++k;
  });
  if (k != out.operands.size())
    throw std::logic_error("trnsim compiler bug: a placed instruction lost or gained operands");
  return out;
}

// Whether an instruction of one trip (`a`) and one of the next (`b`) may touch the same
// bytes, one of them writing: rectangles of the placed operands (a register-relative one:
// anything of its storage or of a tile over the same bytes). A barrier orders everything
// around it, across cores: a trip's instructions wait for the last trip's barrier, and a
// barrier for the last trip's instructions (as a fence would).
bool trips_conflict(const KernelIr& ir, const Allocation& alloc, const TripAccesses& a,
                    const TripAccesses& b) {
  if (a.barrier || b.barrier) return true;
  // Uses of one engine state stay in program order across trips too (as the dependency pass
  // keeps them within a trip).
  if (a.state != isa::EngineState::kNone && a.state == b.state) return true;
  for (const TripOperand& p : a.operands)
    for (const TripOperand& q : b.operands) {
      if (!(p.writes || q.writes)) continue;
      if (p.moved || q.moved) {
        if (may_share(ir, alloc, p.storage, q.storage)) return true;
        continue;
      }
      const AccessPattern& x = *p.placed;
      const AccessPattern& y = *q.placed;
      if (x.memory != y.memory) continue;
      if (x.memory != isa::Memory::kHbm && !(x.start_partition < y.start_partition + y.partitions &&
                                             y.start_partition < x.start_partition + x.partitions))
        continue;
      const auto [xlo, xhi] = x.byte_span();
      const auto [ylo, yhi] = y.byte_span();
      if (xlo < yhi && ylo < xhi) return true;
    }
  return false;
}

// A loop whose body is one straight piece overlaps its trips: instead of a fence, each
// instruction waits for the instructions of the previous trip it conflicts with (their
// signal counts are R(q) - n_q + their ordinal: the previous trip's), and the loop's head
// waits for everything before the loop. Trip 0's waits on the trip before hold at once.
void overlap_trips(const KernelIr& ir, const Piece& body, const std::vector<isa::Instruction>& phys,
                   const Allocation& alloc, ScheduledPiece& piece, int num_queues) {
  const std::size_t m = piece.program.size();
  std::vector<std::int32_t> per_queue(static_cast<std::size_t>(num_queues), 0);
  std::vector<std::int32_t> ordinal(m, 0);  // by issue position
  for (std::size_t k = 0; k < m; ++k)
    ordinal[k] = ++per_queue[static_cast<std::size_t>(piece.queue[k])];
  std::vector<TripAccesses> accesses;  // by issue position, read once
  accesses.reserve(m);
  for (std::size_t k = 0; k < m; ++k)
    accesses.push_back(trip_accesses(ir, phys, body.begin + piece.order[k]));
  piece.carried.assign(m, {});
  for (std::size_t k = 0; k < m; ++k) {
    for (std::size_t l = 0; l < m; ++l) {
      if (!trips_conflict(ir, alloc, accesses[l], accesses[k])) continue;
      const auto q = static_cast<std::size_t>(piece.queue[l]);
      piece.carried[k].emplace_back(piece.queue[l], ordinal[l] - per_queue[q]);
    }
  }
  piece.fenced = false;
}

}  // namespace

SyncResult compile_with_loops(const KernelIr& ir, const std::vector<isa::Instruction>& phys,
                              const std::vector<std::uint8_t>& allowed, const Allocation& alloc,
                              const arch::ChipConfig& chip, const CompileOptions& options,
                              int num_queues, double& estimated_ns) {
  const std::vector<Piece> pieces = pieces_of(ir);
  std::vector<ScheduledPiece> straight;
  std::vector<int> used;
  SyncResult r;
  // Loops whose body is one straight piece: they overlap their trips.
  std::vector<char> overlapped(ir.loops.size(), 0);
  for (std::size_t k = 0; k + 2 < pieces.size(); ++k)
    if (pieces[k].kind == PieceKind::kHead && pieces[k + 1].kind == PieceKind::kStraight &&
        pieces[k + 2].kind == PieceKind::kTail)
      overlapped[pieces[k].loop] = 1;
  for (std::size_t k = 0; k < pieces.size(); ++k) {
    const Piece& piece = pieces[k];
    if (piece.kind != PieceKind::kStraight) continue;
    straight.push_back(schedule_piece(ir, piece, phys, allowed, alloc, chip, options, num_queues));
    if (k > 0 && pieces[k - 1].kind == PieceKind::kHead && overlapped[pieces[k - 1].loop])
      overlap_trips(ir, piece, phys, alloc, straight.back(), num_queues);
    estimated_ns += straight.back().estimated_ns;  // each loop body counted once
    r.cross_edges += straight.back().cross_edges;
    used.insert(used.end(), straight.back().queue.begin(), straight.back().queue.end());
  }
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  if (used.empty()) used.push_back(queue_key({isa::Engine::kSync, 0}));
  Emitter emitter(ir, used, num_queues);
  std::size_t next_straight = 0;
  for (const Piece& piece : pieces) {
    switch (piece.kind) {
      case PieceKind::kStraight:
        emitter.straight(straight[next_straight++]);
        break;
      case PieceKind::kControl: {
        isa::Instruction inst = phys[piece.begin];
        inst.origin = ir.instructions[piece.begin].inst.origin;
        emitter.control(inst);
        break;
      }
      case PieceKind::kHead:
        emitter.head(ir.loops[piece.loop], overlapped[piece.loop] != 0);
        break;
      case PieceKind::kTail:
        emitter.tail(ir.loops[piece.loop]);
        break;
    }
  }
  emitter.finish();
  r.program = std::move(emitter.program());
  for (const isa::Instruction& inst : r.program) {
    r.waits += inst.waits.size();
    r.signals += inst.signals.size();
  }
  return r;
}

}  // namespace trnsim::compiler::detail
