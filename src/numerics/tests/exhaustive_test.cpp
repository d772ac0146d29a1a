// Long tests (label "long"): every one of the 2^32 fp32 inputs converted to BF16, FP16,
// FP8 E4M3 (OCP "fn" and legacy IEEE-style) and FP8 E5M2, and 10^8 random inputs for every float
// format, both against the independent oracle of reference.h. Work is split across std::thread.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "numerics/numerics.h"
#include "reference.h"

namespace trnsim::numerics {
namespace {

using testing::RefFormat;
using testing::RefRounder;

unsigned thread_count() {
  return std::max(2u, std::thread::hardware_concurrency());
}

// Expected RNE (kInfNan) code for the fp32 magnitude `bits` (sign clear), given the oracle's
// table index `j` with value[j] <= x < value[j + 1] maintained by the caller's merge walk.
struct SweepOracle {
  const RefFormat& format;
  const RefRounder& rounder;
  std::size_t j = 0;

  std::uint32_t expected(std::uint32_t bits) {
    const RefFormat& f = format;
    const std::uint32_t e_max = (1u << f.exponent_bits) - 1;
    const std::uint32_t sign_bit = 1u << (f.exponent_bits + f.mantissa_bits);
    if (bits > 0x7F800000u) {  // NaN: quiet, top payload bits kept (IEEE-style formats)
      if (f.specials == testing::Specials::kNanOnlyAllOnes) return sign_bit - 1;
      const std::uint32_t payload =
          (bits >> (23 - f.mantissa_bits)) & ((1u << f.mantissa_bits) - 1);
      return (e_max << f.mantissa_bits) | payload | (1u << (f.mantissa_bits - 1));
    }
    if (bits == 0x7F800000u)
      return rounder.encode(std::bit_cast<float>(bits), OverflowMode::kInfNan);
    const double x = std::bit_cast<float>(bits);
    const auto& entries = rounder.entries();
    while (j + 1 < entries.size() && entries[j + 1].value <= x) ++j;
    std::size_t nearest = j;
    if (entries[j].value != x && j + 1 < entries.size()) nearest = rounder.pick(j, x);
    if (j + 1 == entries.size()) nearest = j;  // beyond the overflow grid point
    const std::uint32_t code = entries[nearest].code;
    if (code != rounder.overflow_code()) return code;
    return f.specials == testing::Specials::kIeee ? (e_max << f.mantissa_bits) : sign_bit - 1;
  }
};

// Sweeps magnitudes [begin, end) and checks +x and -x; returns the number of mismatches.
std::uint64_t sweep_range(const RefFormat& f, const RefRounder& rounder, std::uint32_t begin,
                          std::uint32_t end, std::string* first_failure) {
  constexpr std::uint32_t kChunk = 1u << 14;
  const std::uint32_t sign_bit = 1u << (f.exponent_bits + f.mantissa_bits);
  std::vector<float> in(2 * kChunk);
  std::vector<std::uint8_t> codes8(2 * kChunk);
  std::vector<std::uint16_t> codes16(2 * kChunk);
  SweepOracle oracle{f, rounder};
  const double start_value = std::bit_cast<float>(begin);
  oracle.j = static_cast<std::size_t>(
      std::upper_bound(rounder.entries().begin(), rounder.entries().end(), start_value,
                       [](double v, const RefRounder::Entry& e) { return v < e.value; }) -
      rounder.entries().begin() - 1);
  std::uint64_t failures = 0;
  for (std::uint64_t base = begin; base < end; base += kChunk) {
    const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(kChunk, end - base));
    for (std::uint32_t i = 0; i < n; ++i) {
      const auto bits = static_cast<std::uint32_t>(base + i);
      in[i] = std::bit_cast<float>(bits);
      in[kChunk + i] = std::bit_cast<float>(bits | 0x80000000u);
    }
    const std::span<const float> inputs(in.data(), 2 * kChunk);
    if (storage_bytes(f.dtype) == 1) {
      encode_array(f.dtype, inputs, std::span<std::uint8_t>(codes8));
      std::copy(codes8.begin(), codes8.end(), codes16.begin());
    } else {
      encode_array(f.dtype, inputs, std::span<std::uint16_t>(codes16));
    }
    for (std::uint32_t i = 0; i < n; ++i) {
      const auto bits = static_cast<std::uint32_t>(base + i);
      const std::uint32_t expected = oracle.expected(bits);
      bool ok = codes16[i] == expected && codes16[kChunk + i] == (expected | sign_bit);
      if (f.dtype == DType::kFloat16 && (bits * 2654435761u) >> 28 == 0) {
        // Second oracle for FP16 on a hashed 1/16 sample of the inputs (it is a slow software
        // routine): the compiler's own fp32 -> _Float16 conversion (RNE).
        __extension__ using Half = _Float16;
        const auto native = std::bit_cast<std::uint16_t>(static_cast<Half>(in[i]));
        ok = ok && codes16[i] == native;
      }
      if (!ok) {
        if (failures++ == 0) {
          *first_failure = testing::format_name(f) + " input bits " + std::to_string(bits) +
                           " got " + std::to_string(codes16[i]) + "/" +
                           std::to_string(codes16[kChunk + i]) + " expected " +
                           std::to_string(expected);
        }
      }
    }
  }
  return failures;
}

class ExhaustiveTest : public ::testing::TestWithParam<DType> {};

TEST_P(ExhaustiveTest, AllFp32InputsMatchTheOracle) {
  const DType type = GetParam();
  const auto& formats = testing::small_float_formats();
  const RefFormat& f = *std::find_if(formats.begin(), formats.end(),
                                     [&](const RefFormat& r) { return r.dtype == type; });
  const RefRounder rounder(f);
  const unsigned threads = thread_count();
  std::vector<std::thread> workers;
  std::vector<std::uint64_t> failures(threads);
  std::vector<std::string> messages(threads);
  constexpr std::uint64_t kMagnitudes = 1ull << 31;
  for (unsigned t = 0; t < threads; ++t) {
    const auto begin = static_cast<std::uint32_t>(kMagnitudes * t / threads);
    const auto end = static_cast<std::uint32_t>(kMagnitudes * (t + 1) / threads);
    workers.emplace_back(
        [&, t, begin, end] { failures[t] = sweep_range(f, rounder, begin, end, &messages[t]); });
  }
  for (std::thread& w : workers) w.join();
  for (unsigned t = 0; t < threads; ++t) {
    EXPECT_EQ(failures[t], 0u) << messages[t];
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, ExhaustiveTest,
                         ::testing::Values(DType::kBFloat16, DType::kFloat16, DType::kFloat8E4M3,
                                           DType::kFloat8E5M2, DType::kFloat8E4M3Ieee),
                         [](const auto& test_param) {
                           return std::string(name(test_param.param));
                         });

// 10^8 random inputs in total, spread over all float formats, checked against the
// binary-search oracle in both overflow modes (half each).
TEST(RandomLongTest, HundredMillionInputsMatchTheNearestValueSearch) {
  std::vector<RefFormat> formats = testing::small_float_formats();
  formats.push_back(testing::tf32_format());
  constexpr std::uint64_t kTotal = 100'000'000;
  const std::uint64_t per_format = kTotal / formats.size() + 1;
  std::atomic<std::uint64_t> checked{0}, failures{0};
  for (const RefFormat& f : formats) {
    const RefRounder rounder(f);
    const unsigned threads = thread_count();
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        std::mt19937_64 rng(1000 + t + 17 * static_cast<unsigned>(f.dtype));
        constexpr std::size_t kBatch = 1 << 14;
        std::vector<float> in(kBatch);
        std::vector<std::uint32_t> got(kBatch);
        std::vector<std::uint8_t> c8(kBatch);
        std::vector<std::uint16_t> c16(kBatch);
        const int lo = std::max(-149, -f.bias - f.mantissa_bits - 2);
        const int hi = std::min(127, (1 << f.exponent_bits) - f.bias + 1);
        for (std::uint64_t done = 0; done < per_format / threads; done += kBatch) {
          for (std::size_t i = 0; i < kBatch; ++i) {
            const std::uint64_t r = rng();
            const auto bits = static_cast<std::uint32_t>(r);
            if (r >> 62 == 0) {
              in[i] = std::bit_cast<float>(bits);  // anywhere in fp32
            } else {  // inside the format's range, uniformly random mantissa
              const int span = hi - lo + 1;
              const int e = lo + static_cast<int>((r >> 32) % static_cast<std::uint64_t>(span));
              const float m = std::bit_cast<float>(0x3F800000u | (bits & 0x7FFFFFu));
              in[i] = std::ldexp((bits >> 31) ? -m : m, e);
            }
          }
          ConvertOptions options;
          options.overflow = (done / kBatch) % 2 ? OverflowMode::kSaturate : OverflowMode::kInfNan;
          if (storage_bytes(f.dtype) == 1) {
            encode_array(f.dtype, in, std::span<std::uint8_t>(c8), options);
            std::copy(c8.begin(), c8.end(), got.begin());
          } else if (storage_bytes(f.dtype) == 2) {
            encode_array(f.dtype, in, std::span<std::uint16_t>(c16), options);
            std::copy(c16.begin(), c16.end(), got.begin());
          } else {
            encode_array(f.dtype, in, std::span<std::uint32_t>(got), options);
          }
          std::uint64_t local_failures = 0;
          for (std::size_t i = 0; i < kBatch; ++i) {
            if (std::isnan(in[i])) continue;
            const std::uint32_t expected = rounder.encode(in[i], options.overflow) << f.code_shift;
            local_failures += got[i] != expected;
          }
          failures += local_failures;
          checked += kBatch;
        }
      });
    }
    for (std::thread& w : workers) w.join();
    EXPECT_EQ(failures.load(), 0u) << testing::format_name(f);
  }
  EXPECT_GE(checked.load(), kTotal);
}

}  // namespace
}  // namespace trnsim::numerics
