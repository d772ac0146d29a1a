#include "sim/describe.h"

#include <fmt/core.h>

namespace trnsim::sim {

std::string queue_name(const isa::QueueId& queue) {
  if (queue.engine == isa::Engine::kDma) return fmt::format("dma{}", queue.index);
  return std::string(isa::engine_name(queue.engine));
}

std::string describe_instruction(const isa::Instruction& inst, std::size_t index) {
  std::string text = fmt::format("instruction {} ({}", index, isa::op_name(inst.op));
  if (!inst.name.empty()) text += fmt::format(" '{}'", inst.name);
  return text + ")";
}

}  // namespace trnsim::sim
