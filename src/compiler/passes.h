// Internal interfaces between the compiler's passes (not installed; see compiler.h for the
// public API and docs/compiler.md for what each pass does).
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "arch/arch.h"
#include "compiler/compiler.h"
#include "isa/isa.h"
#include "kernel/ir.h"

namespace trnsim::compiler::detail {

// isa::for_each_operand in the form the passes call it: f(AccessPattern&, isa::Role,
// std::string_view field, int list_index), list_index >= 0 only for entries of lists.
template <class F>
void for_each_operand(isa::Instruction& inst, F&& f) {
  isa::for_each_operand(inst.op, [&](isa::AccessPattern& ap, const isa::OperandRef& operand) {
    f(ap, operand.role, operand.name, operand.list_index);
  });
}

// Dense queue numbering used by the scheduler and the synchroniser: compute engines and sync
// by their Engine value (0..4), DMA queue q at 5 + q. The semaphore of a queue has the same
// number.
inline constexpr int kFirstDmaQueueKey = 5;
inline int queue_key(const isa::QueueId& q) {
  return q.engine == isa::Engine::kDma ? kFirstDmaQueueKey + q.index : static_cast<int>(q.engine);
}
inline isa::QueueId queue_of_key(int key) {
  if (key >= kFirstDmaQueueKey)
    return {isa::Engine::kDma, static_cast<std::uint8_t>(key - kFirstDmaQueueKey)};
  return {static_cast<isa::Engine>(key), 0};
}

// What the scheduler needs about one instruction of a program.
struct SchedInput {
  const std::vector<isa::Instruction>* insts = nullptr;  // physical operands
  const std::vector<std::uint8_t>* engines = nullptr;    // verified engine masks
  const std::vector<int>* fixed_dma_queue = nullptr;     // -1 = compiler's choice
  const std::vector<std::vector<std::uint32_t>>* preds = nullptr;
};

struct SchedResult {
  std::vector<std::uint32_t> order;  // issue order over all queues (a topological order)
  std::vector<int> queue;            // queue key per instruction (IR index)
  double estimated_ns = 0;           // estimated end time (0 when not scheduled)
};

SchedResult schedule_list(const SchedInput& in, const arch::ChipConfig& chip, int dma_queues);
SchedResult schedule_in_order(const SchedInput& in, int dma_queues);

}  // namespace trnsim::compiler::detail
