// Scalar and bulk conversions between fp32 and the storage formats.
#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "numerics/format_tags.h"
#include "numerics/numerics.h"
#include "numerics/packing.h"

namespace trnsim::numerics {
namespace {

using namespace detail;

// Elements converted per step when going through a stack buffer (byte storage, x4 packing):
// small enough to stay in L1, large enough that the per-chunk overhead vanishes.
constexpr std::size_t kChunk = 2048;

template <class Tag, RoundingMode R, OverflowMode O, class Word>
void encode_loop(const float* in, Word* out, std::size_t n, StochasticKey key,
                 std::uint64_t first_index) {
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t random = 0;
    if constexpr (R == RoundingMode::kStochastic) {
      random = stochastic_bits_keyed(key, first_index + i);
    }
    out[i] = static_cast<Word>(Tag::template encode<R, O>(float_bits(in[i]), random));
  }
}

template <class Tag, class Word>
void encode_tagged(const float* in, Word* out, std::size_t n, const ConvertOptions& options) {
  if constexpr (!Tag::kUsesOptions) {
    encode_loop<Tag, RoundingMode::kNearestEven, OverflowMode::kSaturate>(in, out, n, {}, 0);
  } else {
    const StochasticKey key = make_stochastic_key(options.seed);
    with_modes(options.rounding, options.overflow, [&]<RoundingMode R, OverflowMode O>() {
      encode_loop<Tag, R, O>(in, out, n, key, options.first_index);
    });
  }
}

template <class Tag, class Word>
void decode_loop(const Word* in, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = Tag::decode(in[i]);
}

// Element codes (one per byte) of the lane type of `packed`, for in.size() elements.
void encode_lanes(DType packed, std::span<const float> in, std::uint8_t* codes,
                  const ConvertOptions& options) {
  visit_type(unpacked_element(packed),
             [&](auto tag) { encode_tagged<decltype(tag)>(in.data(), codes, in.size(), options); });
}

template <class Word>
void encode_packed(DType packed, std::span<const float> in, std::span<Word> out,
                   const ConvertOptions& options) {
  check(in.size() == 4 * out.size(), "encode_array: x4 types need in.size() == 4 * out.size()");
  std::array<std::uint8_t, kChunk> codes;
  for (std::size_t start = 0; start < in.size(); start += kChunk) {
    const std::size_t n = std::min(kChunk, in.size() - start);
    ConvertOptions piece = options;
    piece.first_index = options.first_index + start;
    encode_lanes(packed, in.subspan(start, n), codes.data(), piece);
    pack_x4_words(packed, codes.data(), out.data() + start / 4, n / 4);
  }
}

template <class Word>
void decode_packed(DType packed, std::span<const Word> in, std::span<float> out) {
  check(out.size() == 4 * in.size(), "decode_array: x4 types need out.size() == 4 * in.size()");
  std::array<std::uint8_t, kChunk> codes;
  for (std::size_t start = 0; start < out.size(); start += kChunk) {
    const std::size_t n = std::min(kChunk, out.size() - start);
    unpack_x4_words(packed, in.data() + start / 4, codes.data(), n / 4);
    visit_type(unpacked_element(packed),
               [&](auto tag) { decode_loop<decltype(tag)>(codes.data(), out.data() + start, n); });
  }
}

template <class Word>
void encode_array_impl(DType type, std::span<const float> in, std::span<Word> out,
                       const ConvertOptions& options) {
  check(storage_bytes(type) == sizeof(Word), "encode_array: word size does not match the type");
  if (is_mx_packed(type)) return encode_packed(type, in, out, options);
  check(in.size() == out.size(), "encode_array: in and out sizes differ");
  visit_type(type, [&](auto tag) {
    encode_tagged<decltype(tag)>(in.data(), out.data(), in.size(), options);
  });
}

template <class Word>
void decode_array_impl(DType type, std::span<const Word> in, std::span<float> out) {
  check(storage_bytes(type) == sizeof(Word), "decode_array: word size does not match the type");
  if (is_mx_packed(type)) return decode_packed(type, in, out);
  check(in.size() == out.size(), "decode_array: in and out sizes differ");
  visit_type(type, [&](auto tag) { decode_loop<decltype(tag)>(in.data(), out.data(), in.size()); });
}

// Calls fn(Word{}) with the unsigned word type of `type`'s storage.
template <class Fn>
void with_word_type(DType type, Fn&& fn) {
  switch (storage_bytes(type)) {
    case 1:
      return fn(std::uint8_t{});
    case 2:
      return fn(std::uint16_t{});
    default:
      return fn(std::uint32_t{});
  }
}

std::size_t elements_per_word(DType type) {
  return info(type).elements_per_word;
}

// Integer storage to int64 and back (saturating): the exact path of convert_bytes.
template <class Word>
void ints_to_int64(DType type, const Word* in, std::int64_t* out, std::size_t n) {
  visit_type(type, [&](auto tag) {
    using Tag = decltype(tag);
    if constexpr (IsIntTag<Tag>::value) {
      // int8 values sign-extend: that is the conversion wanted.
      for (std::size_t i = 0; i < n; ++i)
        out[i] = Tag::value(in[i]);  // NOLINT(bugprone-signed-char-misuse)
    }
  });
}

template <class Word>
void int64_to_ints(DType type, const std::int64_t* in, Word* out, std::size_t n) {
  visit_type(type, [&](auto tag) {
    using Tag = decltype(tag);
    if constexpr (IsIntTag<Tag>::value) {
      using Int = decltype(Tag::value(0));
      constexpr std::int64_t kMin =
          std::numeric_limits<Int>::min();  // NOLINT(bugprone-signed-char-misuse)
      constexpr std::int64_t kMax = std::numeric_limits<Int>::max();
      for (std::size_t i = 0; i < n; ++i) {
        const auto v = static_cast<Int>(std::clamp(in[i], kMin, kMax));
        out[i] = static_cast<Word>(static_cast<typename Tag::Unsigned>(v));
      }
    }
  });
}

}  // namespace

std::uint32_t stochastic_bits(std::uint64_t seed, std::uint64_t index) {
  return stochastic_bits_keyed(make_stochastic_key(seed), index);
}

std::uint32_t encode(DType type, float value, const ConvertOptions& options, std::uint64_t index) {
  const std::uint32_t random =
      options.rounding == RoundingMode::kStochastic ? stochastic_bits(options.seed, index) : 0u;
  return visit_type(type, [&](auto tag) {
    using Tag = decltype(tag);
    return with_modes(options.rounding, options.overflow,
                      [&]<RoundingMode R, OverflowMode O>() -> std::uint32_t {
                        return Tag::template encode<R, O>(float_bits(value), random);
                      });
  });
}

float decode(DType type, std::uint32_t code) {
  return visit_type(type, [&](auto tag) { return decltype(tag)::decode(code); });
}

float max_finite(DType type) {
  switch (type) {
    case DType::kFloat32:
      return std::numeric_limits<float>::max();
    case DType::kTFloat32:
      return decode(type, kTF32Field.max_mag << 13);
    case DType::kBFloat16:
      return decode(type, kBF16.max_mag);
    case DType::kFloat16:
      return decode(type, kFP16.max_mag);
    case DType::kFloat8E4M3:
    case DType::kFloat8E4M3x4:
      return decode(DType::kFloat8E4M3, kE4M3.max_mag);
    case DType::kFloat8E4M3Ieee:
      return decode(type, kE4M3Ieee.max_mag);
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2x4:
      return decode(DType::kFloat8E5M2, kE5M2.max_mag);
    case DType::kFloat6E3M2:
      return decode(type, kE3M2.max_mag);
    case DType::kFloat6E2M3:
      return decode(type, kE2M3.max_mag);
    case DType::kFloat4E2M1:
    case DType::kFloat4E2M1x4:
      return decode(DType::kFloat4E2M1, kE2M1.max_mag);
    case DType::kFloat8E8M0:
      return decode_e8m0(0xFE);
    case DType::kInt8:
      return std::numeric_limits<std::int8_t>::max();
    case DType::kInt16:
      return std::numeric_limits<std::int16_t>::max();
    case DType::kInt32:
      return static_cast<float>(std::numeric_limits<std::int32_t>::max());
    case DType::kUInt8:
      return std::numeric_limits<std::uint8_t>::max();
    case DType::kUInt16:
      return std::numeric_limits<std::uint16_t>::max();
    case DType::kUInt32:
      return static_cast<float>(std::numeric_limits<std::uint32_t>::max());
  }
  throw_unsupported(type, "max_finite");
}

std::optional<int> mantissa_bits(DType type) {
  return visit_type(unpacked_element(type), []<class Tag>(Tag) -> std::optional<int> {
    if constexpr (requires { Tag::kMantissaBits; }) return Tag::kMantissaBits;
    return std::nullopt;
  });
}

void encode_array(DType type, std::span<const float> in, std::span<std::uint8_t> out,
                  const ConvertOptions& options) {
  encode_array_impl(type, in, out, options);
}
void encode_array(DType type, std::span<const float> in, std::span<std::uint16_t> out,
                  const ConvertOptions& options) {
  encode_array_impl(type, in, out, options);
}
void encode_array(DType type, std::span<const float> in, std::span<std::uint32_t> out,
                  const ConvertOptions& options) {
  encode_array_impl(type, in, out, options);
}
void decode_array(DType type, std::span<const std::uint8_t> in, std::span<float> out) {
  decode_array_impl(type, in, out);
}
void decode_array(DType type, std::span<const std::uint16_t> in, std::span<float> out) {
  decode_array_impl(type, in, out);
}
void decode_array(DType type, std::span<const std::uint32_t> in, std::span<float> out) {
  decode_array_impl(type, in, out);
}

void encode_bytes(DType type, std::span<const float> in, std::span<std::byte> out,
                  const ConvertOptions& options) {
  const std::size_t per_word = elements_per_word(type);
  check(in.size() % per_word == 0 && out.size() * per_word == in.size() * storage_bytes(type),
        "encode_bytes: out.size() must be the storage size of in");
  with_word_type(type, [&](auto word_tag) {
    using Word = decltype(word_tag);
    std::array<Word, kChunk> words;
    const std::size_t chunk_elements = kChunk * per_word;
    for (std::size_t start = 0; start < in.size(); start += chunk_elements) {
      const std::size_t n = std::min(chunk_elements, in.size() - start);
      ConvertOptions piece = options;
      piece.first_index = options.first_index + start;
      const std::size_t n_words = n / per_word;
      encode_array_impl(type, in.subspan(start, n), std::span<Word>(words.data(), n_words), piece);
      std::memcpy(out.data() + start / per_word * sizeof(Word), words.data(),
                  n_words * sizeof(Word));
    }
  });
}

void decode_bytes(DType type, std::span<const std::byte> in, std::span<float> out) {
  const std::size_t per_word = elements_per_word(type);
  check(out.size() % per_word == 0 && in.size() * per_word == out.size() * storage_bytes(type),
        "decode_bytes: in.size() must be the storage size of out");
  with_word_type(type, [&](auto word_tag) {
    using Word = decltype(word_tag);
    std::array<Word, kChunk> words;
    const std::size_t chunk_elements = kChunk * per_word;
    for (std::size_t start = 0; start < out.size(); start += chunk_elements) {
      const std::size_t n = std::min(chunk_elements, out.size() - start);
      const std::size_t n_words = n / per_word;
      std::memcpy(words.data(), in.data() + start / per_word * sizeof(Word),
                  n_words * sizeof(Word));
      decode_array_impl(type, std::span<const Word>(words.data(), n_words), out.subspan(start, n));
    }
  });
}

void convert_bytes(DType from, std::span<const std::byte> in, DType to, std::span<std::byte> out,
                   const ConvertOptions& options) {
  const std::size_t from_per_word = elements_per_word(from);
  const std::size_t to_per_word = elements_per_word(to);
  check(in.size() % storage_bytes(from) == 0, "convert_bytes: partial input word");
  const std::size_t count = in.size() / storage_bytes(from) * from_per_word;
  check(count % to_per_word == 0 && out.size() == count / to_per_word * storage_bytes(to),
        "convert_bytes: out.size() does not match the element count");
  const std::size_t in_step = kChunk / from_per_word * storage_bytes(from);
  const std::size_t out_step = kChunk / to_per_word * storage_bytes(to);

  if (is_integer(from) && is_integer(to)) {
    std::array<std::int64_t, kChunk> values;
    for (std::size_t start = 0, piece = 0; start < count; start += kChunk, ++piece) {
      const std::size_t n = std::min(kChunk, count - start);
      with_word_type(from, [&](auto word_tag) {
        using Word = decltype(word_tag);
        std::array<Word, kChunk> words;
        std::memcpy(words.data(), in.data() + piece * in_step, n * sizeof(Word));
        ints_to_int64(from, words.data(), values.data(), n);
      });
      with_word_type(to, [&](auto word_tag) {
        using Word = decltype(word_tag);
        std::array<Word, kChunk> words;
        int64_to_ints(to, values.data(), words.data(), n);
        std::memcpy(out.data() + piece * out_step, words.data(), n * sizeof(Word));
      });
    }
    return;
  }

  std::array<float, kChunk> values;
  for (std::size_t start = 0, piece = 0; start < count; start += kChunk, ++piece) {
    const std::size_t n = std::min(kChunk, count - start);
    const std::span<float> chunk(values.data(), n);
    decode_bytes(from, in.subspan(piece * in_step, n / from_per_word * storage_bytes(from)), chunk);
    ConvertOptions piece_options = options;
    piece_options.first_index = options.first_index + start;
    encode_bytes(to, chunk, out.subspan(piece * out_step, n / to_per_word * storage_bytes(to)),
                 piece_options);
  }
}

}  // namespace trnsim::numerics
