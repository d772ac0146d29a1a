// The host's physical memory, to refuse a run that could not fit in it before it starts
// (instead of ending in std::bad_alloc or the kernel's out-of-memory killer). Header-only;
// the bottom of the layer stack.
#pragma once

#include <unistd.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cstdint>

namespace trnsim::util {

// Bytes of physical memory, or 0 when the system does not say.
inline std::uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size);
}

// A functional run allocates and frees an operand buffer per instruction, up to megabytes
// each (a 128 x 8192 fp32 tile is 4 MiB). glibc serves blocks that large with fresh mmaps and
// returns freed heap tops to the system, so every instruction paid page faults again: 40-60%
// of `trnsim run rmsnorm` on a 2-core VM (perf, BENCHMARKS.md). Programs (not the libraries)
// call this once at start: blocks up to 32 MiB (glibc's ceiling for the setting) come from
// the heap and freed memory up to 1 GiB stays for reuse. Elsewhere it does nothing.
inline void keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

}  // namespace trnsim::util
