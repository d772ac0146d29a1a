#include "kernel/ir.h"

#include <fmt/core.h>

#include "isa/asm.h"

namespace trnsim::kernel {

std::string_view buffer_name(Buffer b) {
  switch (b) {
    case Buffer::kSbuf: return "sbuf";
    case Buffer::kPsum: return "psum";
    case Buffer::kPrivateHbm: return "private_hbm";
    case Buffer::kSharedHbm: return "shared_hbm";
  }
  return "?";
}

std::string_view tensor_role_name(TensorRole r) {
  switch (r) {
    case TensorRole::kInput: return "input";
    case TensorRole::kOutput: return "output";
    case TensorRole::kScratch: return "scratch";
  }
  return "?";
}

namespace {
std::string where_prefix(const isa::Origin& o) {
  if (o.file.empty()) return {};
  return fmt::format("{}:{}: ", o.file, o.line);
}
}  // namespace

KernelError::KernelError(isa::Origin where, std::string why)
    : std::runtime_error(where_prefix(where) + why), where_(std::move(where)), why_(std::move(why)) {}

}  // namespace trnsim::kernel
