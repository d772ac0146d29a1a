// The host's physical memory, to refuse a run that could not fit in it before it starts
// (instead of ending in std::bad_alloc or the kernel's out-of-memory killer). Header-only;
// the bottom of the layer stack.
#pragma once

#include <unistd.h>

#include <cstdint>

namespace trnsim::util {

// Bytes of physical memory, or 0 when the system does not say.
inline std::uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size);
}

}  // namespace trnsim::util
