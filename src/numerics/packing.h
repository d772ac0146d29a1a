// Internal: x4 lane packing shared by the bulk conversions and MX quantisation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "numerics/dtype.h"

namespace trnsim::numerics::detail {

// The conversions' argument checks: std::invalid_argument with `message` unless `ok`.
inline void check(bool ok, const char* message) {
  if (!ok) throw std::invalid_argument(message);
}

// Lane width of an x4-packed type: element i occupies bits [i * width, (i + 1) * width).
constexpr unsigned x4_lane_bits(DType packed) {
  return packed == DType::kFloat4E2M1x4 ? 4 : 8;
}

template <unsigned kLaneBits, class Word>
inline void pack_lanes(const std::uint8_t* codes, Word* words, std::size_t n_words) {
  constexpr std::uint32_t kMask = (1u << kLaneBits) - 1;
  for (std::size_t w = 0; w < n_words; ++w) {
    const std::uint8_t* c = codes + 4 * w;
    const std::uint32_t word = (c[0] & kMask) | ((c[1] & kMask) << kLaneBits) |
                               ((c[2] & kMask) << (2 * kLaneBits)) |
                               ((c[3] & kMask) << (3 * kLaneBits));
    words[w] = static_cast<Word>(word);
  }
}

template <unsigned kLaneBits, class Word>
inline void unpack_lanes(const Word* words, std::uint8_t* codes, std::size_t n_words) {
  constexpr std::uint32_t kMask = (1u << kLaneBits) - 1;
  for (std::size_t w = 0; w < n_words; ++w) {
    const std::uint32_t word = words[w];
    for (unsigned lane = 0; lane < 4; ++lane) {
      codes[4 * w + lane] = static_cast<std::uint8_t>((word >> (lane * kLaneBits)) & kMask);
    }
  }
}

// Word is the storage word type of `packed` (uint32_t for fp8_x4, uint16_t for fp4_x4).
template <class Word>
inline void pack_x4_words(DType packed, const std::uint8_t* codes, Word* words,
                          std::size_t n_words) {
  if (x4_lane_bits(packed) == 4) {
    pack_lanes<4>(codes, words, n_words);
  } else {
    pack_lanes<8>(codes, words, n_words);
  }
}

template <class Word>
inline void unpack_x4_words(DType packed, const Word* words, std::uint8_t* codes,
                            std::size_t n_words) {
  if (x4_lane_bits(packed) == 4) {
    unpack_lanes<4>(words, codes, n_words);
  } else {
    unpack_lanes<8>(words, codes, n_words);
  }
}

}  // namespace trnsim::numerics::detail
