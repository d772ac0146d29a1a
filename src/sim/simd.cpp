// The simulator kernels' instruction-set level (sim.h, SimdLevel): the host's, capped by
// TRNSIM_SIMD or limit_simd.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "sim/sim.h"
#include "util/enum_names.h"

namespace trnsim::sim {

namespace {

constexpr std::array<std::string_view, 3> kSimdNames = {"baseline", "avx2", "avx512"};

SimdLevel host_level() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma")) return SimdLevel::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return SimdLevel::kAvx2;
#endif
  return SimdLevel::kBaseline;
}

// The environment's cap, read once; an unknown value is ignored (the host's level).
SimdLevel default_level() {
  const SimdLevel host = host_level();
  const char* asked = std::getenv("TRNSIM_SIMD");
  if (asked == nullptr) return host;
  const std::optional<SimdLevel> cap = util::enum_from_name<SimdLevel>(kSimdNames, asked);
  if (!cap) {
    std::fprintf(stderr, "trnsim: TRNSIM_SIMD=%s ignored (baseline, avx2 or avx512)\n", asked);
    return host;
  }
  return std::min(*cap, host);
}

constexpr int kDefault = -1;
std::atomic<int> limited{kDefault};

}  // namespace

SimdLevel simd_level() {
  static const SimdLevel fallback = default_level();
  const int cap = limited.load(std::memory_order_relaxed);
  return cap == kDefault ? fallback : std::min(static_cast<SimdLevel>(cap), host_level());
}

std::string_view simd_level_name(SimdLevel level) {
  return util::enum_name(kSimdNames, level);
}

void limit_simd(std::optional<SimdLevel> level) {
  limited.store(level ? static_cast<int>(*level) : kDefault, std::memory_order_relaxed);
}

}  // namespace trnsim::sim
