#include "sim/describe.h"

#include <fmt/core.h>

namespace trnsim::sim {

std::string origin_string(const isa::Origin& origin) {
  if (origin.file.empty() && origin.line == 0) return "";
  if (origin.column == 0) return fmt::format("{}:{}", origin.file, origin.line);
  return fmt::format("{}:{}:{}", origin.file, origin.line, origin.column);
}

std::string queue_name(const isa::QueueId& queue) {
  if (queue.engine == isa::Engine::kDma) return fmt::format("dma{}", queue.index);
  return std::string(isa::engine_name(queue.engine));
}

std::string describe_instruction(const isa::Instruction& inst, std::size_t index) {
  std::string text = fmt::format("instruction {} ({}", index, isa::op_name(inst.op));
  if (!inst.name.empty()) text += fmt::format(" '{}'", inst.name);
  const std::string where = origin_string(inst.origin);
  if (!where.empty()) text += " at " + where;
  return text + ")";
}

}  // namespace trnsim::sim
