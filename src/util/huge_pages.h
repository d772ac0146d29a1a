// Large per-run arrays (a timing-only run of 10^6 instructions allocates some 80 MB of them)
// are written once from start to end. Backed by 4 KiB pages, each page costs a fault on
// first write (a kernel entry, a zeroed page, a page-table update: ~19% of a profiled
// timing-only run, BENCHMARKS.md); transparent huge pages (2 MiB) cut the faults 512-fold.
// Linux only: elsewhere, and where the kernel has transparent huge pages off, the hint does
// nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace trnsim::util {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

// Asks for huge pages on the whole 2 MiB pages inside [data, data + bytes). A hint: pages
// already touched keep their size, and a refusal is not an error.
inline void advise_huge_pages(const void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes < kHugePageBytes) return;
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first = (begin + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const std::uintptr_t last = (begin + bytes) & ~(kHugePageBytes - 1);
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

// `values` holds `count` copies of `value`, in storage advised as above before it is written.
template <class T>
void assign_huge(std::vector<T>& values, std::size_t count, const T& value = T{}) {
  if (values.capacity() < count) {
    std::vector<T>().swap(values);  // a fresh allocation: its pages are not yet touched
    values.reserve(count);
    advise_huge_pages(values.data(), count * sizeof(T));
  }
  values.assign(count, value);
}

}  // namespace trnsim::util
