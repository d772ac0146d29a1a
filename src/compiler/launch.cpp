// Launch-level checks and HBM layout: the programs of one launch (one per program id) must
// agree on their shared HBM tensors, which are laid out once, followed by each program's
// private ones (docs/compiler.md, "Allocate").
#include <fmt/format.h>

#include <algorithm>

#include "compiler/passes.h"

namespace trnsim::compiler::detail {

namespace {

constexpr std::uint64_t kHbmBase = std::uint64_t{1} << 20;  // first HBM placement (1 MiB)
constexpr std::uint64_t kHbmAlign = 64;

bool same_hbm_tensor(const Storage& a, const Storage& b) {
  const bool same_constant =
      a.constant == b.constant || (a.constant && b.constant && *a.constant == *b.constant);
  return a.buffer == b.buffer && a.dtype == b.dtype && a.shape == b.shape && a.bytes == b.bytes &&
         a.role == b.role && same_constant;
}

void add_placement(std::vector<HbmPlacement>& out, const Storage& s, int program,
                   std::uint64_t& next) {
  HbmPlacement h;
  h.storage = s.id;
  h.program = program;
  h.name = s.name;
  h.dtype = s.dtype;
  h.shape = s.shape;
  h.role = s.role;
  h.address = next;
  h.bytes = s.bytes;
  h.constant = s.constant;
  out.push_back(std::move(h));
  next = align_up(next + std::max<std::uint64_t>(s.bytes, 1), kHbmAlign);
}

}  // namespace

void check_launch(std::span<const KernelIr> programs) {
  if (programs.empty()) throw KernelError({}, "nothing to compile: no program");
  for (std::size_t p = 0; p < programs.size(); ++p) {
    if (programs[p].program_id != static_cast<int>(p))
      throw KernelError({}, fmt::format("program {} of the launch has program id {} (ids must "
                                        "be 0..{} in order)",
                                        p, programs[p].program_id, programs.size() - 1));
    for (const Storage& s : programs[p].storages)
      if (s.id != static_cast<StorageId>(&s - programs[p].storages.data()))
        throw KernelError(s.origin, fmt::format("storage '{}' has id {} at position {}", s.name,
                                                s.id, &s - programs[p].storages.data()));
  }
  const KernelIr& base = programs[0];
  for (std::size_t p = 1; p < programs.size(); ++p) {
    const KernelIr& other = programs[p];
    const std::size_t n = std::max(base.storages.size(), other.storages.size());
    for (std::size_t id = 0; id < n; ++id) {
      const Storage* a = id < base.storages.size() ? &base.storages[id] : nullptr;
      const Storage* b = id < other.storages.size() ? &other.storages[id] : nullptr;
      const bool a_shared = a && a->buffer == Buffer::kSharedHbm;
      const bool b_shared = b && b->buffer == Buffer::kSharedHbm;
      if (!a_shared && !b_shared) continue;
      if (!a || !b || !same_hbm_tensor(*a, *b)) {
        const Storage& s = a_shared ? *a : *b;
        throw KernelError(s.origin,
                          fmt::format("programs of one launch diverge: shared HBM tensor '{}' "
                                      "(storage {}) differs between program 0 and program {} "
                                      "(shape, dtype, buffer or a shared_constant's data)",
                                      s.name, id, p));
      }
    }
  }
}

std::vector<std::vector<std::uint64_t>> layout_hbm(std::span<const KernelIr> programs,
                                                   std::vector<HbmPlacement>& out) {
  std::uint64_t next = kHbmBase;
  std::vector<std::vector<std::uint64_t>> addr(programs.size());
  for (std::size_t p = 0; p < programs.size(); ++p) addr[p].assign(programs[p].storages.size(), 0);
  for (const Storage& s : programs[0].storages) {
    if (s.buffer != Buffer::kSharedHbm) continue;
    for (auto& a : addr) a[s.id] = next;
    add_placement(out, s, -1, next);
  }
  for (std::size_t p = 0; p < programs.size(); ++p)
    for (const Storage& s : programs[p].storages) {
      if (s.buffer != Buffer::kPrivateHbm) continue;
      addr[p][s.id] = next;
      add_placement(out, s, static_cast<int>(p), next);
    }
  return addr;
}

}  // namespace trnsim::compiler::detail
