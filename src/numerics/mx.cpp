// OCP Microscaling blocks: shared E8M0 scale per 32 elements, elements in FP8/FP6/FP4.
#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "numerics/format_tags.h"
#include "numerics/numerics.h"
#include "numerics/packing.h"

namespace trnsim::numerics {
namespace {

using namespace detail;

std::size_t block_count(std::size_t elements) {
  return (elements + kMxBlockSize - 1) / kMxBlockSize;
}

// Calls fn(FloatTag<F>{}) for an MX element type.
template <class Fn>
decltype(auto) visit_mx_element(DType element, Fn&& fn) {
  return visit_small_float(element, std::forward<Fn>(fn), "MX element");
}

// floor(log2 |x|) read from the exponent bits (exact, unlike a float log2 just below a
// power of two); `abs_bits` is a finite non-zero magnitude.
int floor_log2_of_bits(std::uint32_t abs_bits) {
  const int biased = static_cast<int>(abs_bits >> 23);
  if (biased != 0) return biased - 127;
  // fp32 subnormal: value = m * 2^-149 with m < 2^23.
  return -149 + (31 - std::countl_zero(abs_bits));
}

std::uint8_t scale_code_from_amax(std::uint32_t amax_bits, int emax, MxScaleRule rule) {
  if (amax_bits >= kFp32Inf) return 0xFF;  // NaN or Inf somewhere in the block
  if (amax_bits == 0) return 0x00;         // all zero: smallest scale, elements all zero
  const int headroom = rule == MxScaleRule::kTrainium ? emax - 1 : emax;
  const int exponent = floor_log2_of_bits(amax_bits) - headroom;
  return static_cast<std::uint8_t>(std::clamp(exponent + 127, 0, 254));
}

// Largest magnitude as fp32 bits: integer max of |bits| orders finite values, and NaN/Inf
// (exponent all ones) compare above every finite value, so one reduction finds both.
std::uint32_t amax_bits_of(const float* in, std::size_t n) {
  std::uint32_t amax = 0;
  for (std::size_t i = 0; i < n; ++i) amax = std::max(amax, float_bits(in[i]) & kAbsMask);
  return amax;
}

template <FloatFormat F>
constexpr std::uint8_t block_nan_code() {
  return static_cast<std::uint8_t>(F.has_nan ? F.nan_mag : 0u);
}

template <FloatFormat F, RoundingMode R>
std::uint8_t quantize_block(const float* in, std::size_t n, std::uint8_t* codes, MxScaleRule rule,
                            StochasticKey key, std::uint64_t first_index) {
  constexpr int kEmax = (1 << F.exp_bits) - 1 - F.bias - (F.has_inf ? 1 : 0);
  const std::uint8_t scale = scale_code_from_amax(amax_bits_of(in, n), kEmax, rule);
  if (scale == 0xFF) {
    std::fill(codes, codes + n, block_nan_code<F>());
    return scale;
  }
  // 1 / 2^(scale - 127) = 2^(127 - scale); scale <= 253 here (floor(log2) <= 127, emax >= 2),
  // so this is a normal float and the multiply below is exact.
  const float inverse_scale = bits_float(static_cast<std::uint32_t>(254 - scale) << 23);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t random = 0;
    if constexpr (R == RoundingMode::kStochastic) {
      random = stochastic_bits_keyed(key, first_index + i);
    }
    // Elements that overflow after scaling clamp to +-max normal (OCP v1.0 6.3).
    codes[i] = static_cast<std::uint8_t>(
        encode_float<F, R, OverflowMode::kSaturate>(float_bits(in[i] * inverse_scale), random));
  }
  return scale;
}

template <FloatFormat F>
void dequantize_block(const std::uint8_t* codes, std::size_t n, std::uint8_t scale, float* out) {
  const float scale_value = decode_e8m0(scale);  // NaN for 0xFF: the whole block is NaN
  for (std::size_t i = 0; i < n; ++i) out[i] = decode_float<F>(codes[i]) * scale_value;
}

// Runs fn(Tag, integral_constant<RoundingMode>) for the element type and rounding mode.
template <class Fn>
void with_element_and_rounding(DType element, RoundingMode rounding, Fn&& fn) {
  visit_mx_element(element, [&](auto tag) {
    if (rounding == RoundingMode::kNearestEven) {
      fn(tag, std::integral_constant<RoundingMode, RoundingMode::kNearestEven>{});
    } else {
      fn(tag, std::integral_constant<RoundingMode, RoundingMode::kStochastic>{});
    }
  });
}

template <class Tag>
struct TagFormat;
template <FloatFormat F, int kShift>
struct TagFormat<FloatTag<F, kShift>> {
  static constexpr FloatFormat kFormat = F;
};

void quantize_codes(std::span<const float> in, std::uint8_t* codes, std::uint8_t* scales,
                    const MxOptions& options) {
  const StochasticKey key = make_stochastic_key(options.seed);
  with_element_and_rounding(options.element, options.rounding, [&](auto tag, auto rounding) {
    constexpr FloatFormat kF = TagFormat<decltype(tag)>::kFormat;
    constexpr RoundingMode kR = decltype(rounding)::value;
    for (std::size_t b = 0, start = 0; start < in.size(); ++b, start += kMxBlockSize) {
      const std::size_t n = std::min(kMxBlockSize, in.size() - start);
      scales[b] = quantize_block<kF, kR>(in.data() + start, n, codes + start, options.scale_rule,
                                         key, options.first_index + start);
    }
  });
}

void dequantize_codes(DType element, const std::uint8_t* codes, std::size_t count,
                      const std::uint8_t* scales, float* out) {
  visit_mx_element(element, [&](auto tag) {
    constexpr FloatFormat kF = TagFormat<decltype(tag)>::kFormat;
    for (std::size_t b = 0, start = 0; start < count; ++b, start += kMxBlockSize) {
      dequantize_block<kF>(codes + start, std::min(kMxBlockSize, count - start), scales[b],
                           out + start);
    }
  });
}

void check_packed(DType packed) {
  if (!is_mx_packed(packed)) throw_unsupported(packed, "x4 packing");
}

// Calls fn(Word{}) with the storage word of an x4-packed type.
template <class Fn>
void with_packed_word(DType packed, Fn&& fn) {
  check_packed(packed);
  if (storage_bytes(packed) == 2) {
    fn(std::uint16_t{});
  } else {
    fn(std::uint32_t{});
  }
}

// Blocks per step of the packed paths (a multiple of 32 elements, so blocks never straddle).
constexpr std::size_t kPackedChunk = 64 * kMxBlockSize;

// Calls chunk(start, n) for consecutive pieces [start, start + n) of `count` elements, each
// at most kPackedChunk long.
template <class Chunk>
void for_each_chunk(std::size_t count, Chunk chunk) {
  for (std::size_t start = 0; start < count; start += kPackedChunk)
    chunk(start, std::min(kPackedChunk, count - start));
}

}  // namespace

int mx_element_emax(DType element) {
  return visit_mx_element(element, [](auto tag) {
    constexpr FloatFormat kF = TagFormat<decltype(tag)>::kFormat;
    return (1 << kF.exp_bits) - 1 - kF.bias - (kF.has_inf ? 1 : 0);
  });
}

float e8m0_to_float(std::uint8_t scale_code) {
  return decode_e8m0(scale_code);
}

std::uint8_t mx_scale_code(std::span<const float> block, DType element, MxScaleRule rule) {
  check(block.size() <= kMxBlockSize, "mx_scale_code: a block has at most 32 elements");
  return scale_code_from_amax(amax_bits_of(block.data(), block.size()), mx_element_emax(element),
                              rule);
}

std::uint8_t quantize_mx_block(std::span<const float> block, std::span<std::uint8_t> codes,
                               const MxOptions& options) {
  check(block.size() <= kMxBlockSize, "quantize_mx_block: a block has at most 32 elements");
  check(codes.size() == block.size(), "quantize_mx_block: codes.size() != block.size()");
  std::uint8_t scale = 0;
  quantize_codes(block, codes.data(), &scale, options);
  return scale;
}

void quantize_mx(std::span<const float> in, std::span<std::uint8_t> codes,
                 std::span<std::uint8_t> scales, const MxOptions& options) {
  check(codes.size() == in.size(), "quantize_mx: codes.size() != in.size()");
  check(scales.size() == block_count(in.size()), "quantize_mx: scales.size() != blocks");
  quantize_codes(in, codes.data(), scales.data(), options);
}

void dequantize_mx(DType element, std::span<const std::uint8_t> codes,
                   std::span<const std::uint8_t> scales, std::span<float> out) {
  check(codes.size() == out.size(), "dequantize_mx: codes.size() != out.size()");
  check(scales.size() == block_count(codes.size()), "dequantize_mx: scales.size() != blocks");
  dequantize_codes(element, codes.data(), codes.size(), scales.data(), out.data());
}

void pack_x4(DType packed, std::span<const std::uint8_t> codes, std::span<std::byte> words) {
  with_packed_word(packed, [&](auto word_tag) {
    using Word = decltype(word_tag);
    check(codes.size() % 4 == 0 && words.size() == codes.size() / 4 * sizeof(Word),
          "pack_x4: words must hold codes.size() / 4 words");
    std::array<Word, kPackedChunk / 4> buffer;
    for_each_chunk(codes.size(), [&](std::size_t start, std::size_t n) {
      pack_x4_words(packed, codes.data() + start, buffer.data(), n / 4);
      std::memcpy(words.data() + start / 4 * sizeof(Word), buffer.data(), n / 4 * sizeof(Word));
    });
  });
}

void unpack_x4(DType packed, std::span<const std::byte> words, std::span<std::uint8_t> codes) {
  with_packed_word(packed, [&](auto word_tag) {
    using Word = decltype(word_tag);
    check(codes.size() % 4 == 0 && words.size() == codes.size() / 4 * sizeof(Word),
          "unpack_x4: words must hold codes.size() / 4 words");
    std::array<Word, kPackedChunk / 4> buffer;
    for_each_chunk(codes.size(), [&](std::size_t start, std::size_t n) {
      std::memcpy(buffer.data(), words.data() + start / 4 * sizeof(Word), n / 4 * sizeof(Word));
      unpack_x4_words(packed, buffer.data(), codes.data() + start, n / 4);
    });
  });
}

void quantize_mx_packed(DType packed, std::span<const float> in, std::span<std::byte> words,
                        std::span<std::uint8_t> scales, const MxOptions& options) {
  check_packed(packed);
  check(in.size() % 4 == 0, "quantize_mx_packed: in.size() must be a multiple of 4");
  check(words.size() == in.size() / 4 * storage_bytes(packed),
        "quantize_mx_packed: words.size() does not match in.size()");
  check(scales.size() == block_count(in.size()), "quantize_mx_packed: scales.size() != blocks");
  MxOptions piece = options;
  piece.element = unpacked_element(packed);
  std::array<std::uint8_t, kPackedChunk> codes;
  for_each_chunk(in.size(), [&](std::size_t start, std::size_t n) {
    piece.first_index = options.first_index + start;
    quantize_codes(in.subspan(start, n), codes.data(), scales.data() + start / kMxBlockSize, piece);
    const std::size_t word_offset = start / 4 * storage_bytes(packed);
    pack_x4(packed, std::span<const std::uint8_t>(codes.data(), n),
            words.subspan(word_offset, n / 4 * storage_bytes(packed)));
  });
}

void dequantize_mx_packed(DType packed, std::span<const std::byte> words,
                          std::span<const std::uint8_t> scales, std::span<float> out) {
  check_packed(packed);
  check(out.size() % 4 == 0 && words.size() == out.size() / 4 * storage_bytes(packed),
        "dequantize_mx_packed: words.size() does not match out.size()");
  check(scales.size() == block_count(out.size()), "dequantize_mx_packed: scales.size() != blocks");
  std::array<std::uint8_t, kPackedChunk> codes;
  for_each_chunk(out.size(), [&](std::size_t start, std::size_t n) {
    const std::size_t word_offset = start / 4 * storage_bytes(packed);
    unpack_x4(packed, words.subspan(word_offset, n / 4 * storage_bytes(packed)),
              std::span<std::uint8_t>(codes.data(), n));
    dequantize_codes(unpacked_element(packed), codes.data(), n,
                     scales.data() + start / kMxBlockSize, out.data() + start);
  });
}

}  // namespace trnsim::numerics
