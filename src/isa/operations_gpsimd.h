// The random-number operations (rand2, rng, dropout and the XORWOW state) and the GpSimd
// index operations (sequence_bounds, nonzero_with_count, nc_n_gather, topk), declared as
// every operation is (isa/operations.h explains the traits). Part of the public header
// isa/isa.h, through isa/operations.h; include that.
//
// The random operations draw from the executing engine's per-lane XORWOW generators, a
// state that lives in the engine rather than in memory: their kState trait says so, and the
// compiler keeps such operations in program order (docs/compiler.md, "Dependencies").
#pragma once

#include <cstdint>
#include <string_view>

#include "isa/types.h"

namespace trnsim::isa {

// Random numbers ------------------------------------------------------------------------

// Uniform random values in [min, max) from the Vector engine's XORWOW state (gen4; NKI:
// "using Vector Engine", the engine nl.random_seed seeds).
struct Rand2 {
  static constexpr std::string_view kName = "rand2";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kVector);
  static constexpr EngineState kState = EngineState::kRng;
  friend bool operator==(const Rand2&, const Rand2&) = default;
  AccessPattern dst;
  float min = 0.0f, max = 1.0f;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("min", min, Role::kAttr);
    v("max", max, Role::kAttr);
  }
};

// Load (set) or store (get) the per-partition XORWOW state of an engine: 6 uint32 per lane.
struct RandSetState {
  static constexpr std::string_view kName = "rand_set_state";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines =
      engine_bit(Engine::kVector) | engine_bit(Engine::kGpSimd);
  static constexpr EngineState kState = EngineState::kRng;
  friend bool operator==(const RandSetState&, const RandSetState&) = default;
  AccessPattern src_seeds;
  template <class V>
  void fields(V&& v) {
    v("src_seeds", src_seeds, Role::kRead);
  }
};
struct RandGetState {
  static constexpr std::string_view kName = "rand_get_state";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines =
      engine_bit(Engine::kVector) | engine_bit(Engine::kGpSimd);
  static constexpr EngineState kState = EngineState::kRng;
  friend bool operator==(const RandGetState&, const RandGetState&) = default;
  AccessPattern dst;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
  }
};

// 32 random bits per element, truncated to dst's integer type (its low bits).
struct Rng {
  static constexpr std::string_view kName = "rng";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines =
      engine_bit(Engine::kVector) | engine_bit(Engine::kGpSimd);
  static constexpr EngineState kState = EngineState::kRng;
  friend bool operator==(const Rng&, const Rng&) = default;
  AccessPattern dst;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
  }
};

// Seeds every lane of the Vector engine's generators from one 32-bit value ([1, 1] tensor).
struct SetRngSeed {
  static constexpr std::string_view kName = "set_rng_seed";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kVector);
  static constexpr EngineState kState = EngineState::kRng;
  friend bool operator==(const SetRngSeed&, const SetRngSeed&) = default;
  AccessPattern src_seeds;
  template <class V>
  void fields(V&& v) {
    v("src_seeds", src_seeds, Role::kRead);
  }
};

// dst = data, each element zeroed with probability prob (a scalar or [P, 1]); the bits of a
// kept element are copied unchanged.
struct Dropout {
  static constexpr std::string_view kName = "dropout";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kVector);
  static constexpr EngineState kState = EngineState::kRng;
  friend bool operator==(const Dropout&, const Dropout&) = default;
  AccessPattern dst, data;
  ScalarOperand prob = 0.0f;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("data", data, Role::kRead);
    v("prob", prob, Role::kRead);
  }
};

// GpSimd index operations ----------------------------------------------------------------

// For each element of a [1, N] row of segment ids, [start, end] of its segment (dst [1, 2, N]:
// starts then ends); id 0 is padding and gets [N, -1].
struct SequenceBounds {
  static constexpr std::string_view kName = "sequence_bounds";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kGpSimd);
  friend bool operator==(const SequenceBounds&, const SequenceBounds&) = default;
  AccessPattern dst, segment_ids;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("segment_ids", segment_ids, Role::kRead);
  }
};

// On partitions 0, 16, ..., 112 (each GpSimd core's first): the indices of src's nonzero
// elements plus index_offset, then padding_val, then the count (dst has one more element).
struct NonzeroWithCount {
  static constexpr std::string_view kName = "nonzero_with_count";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kGpSimd);
  friend bool operator==(const NonzeroWithCount&, const NonzeroWithCount&) = default;
  AccessPattern dst, src;
  std::int32_t index_offset = 0, padding_val = -1;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);  // only partitions 0, 16, ... are written
    v("src", src, Role::kRead);
    v("index_offset", index_offset, Role::kAttr);
    v("padding_val", padding_val, Role::kAttr);
  }
};

// dst[p, i] = data[p, indices[p, i]], data's free dims flattened (uint32 indices).
struct NcNGather {
  static constexpr std::string_view kName = "nc_n_gather";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kGpSimd);
  friend bool operator==(const NcNGather&, const NcNGather&) = default;
  AccessPattern dst, data, indices;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("data", data, Role::kRead);
    v("indices", indices, Role::kRead);
  }
};

// The K = val_dst free size largest of n bf16 values laid out as a 16-partition snake
// (element e at partition e % 16, column e / 16 of its group), ascending, with their uint32
// positions, written as a snake again: result j at partition j % 16, column j / 16 of the
// group's rows of val_dst / idx_dst (docs/isa.md, section 3.1).
struct Topk {
  static constexpr std::string_view kName = "topk";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kGpSimd);
  friend bool operator==(const Topk&, const Topk&) = default;
  AccessPattern val_dst, idx_dst, src;
  std::uint32_t n = 0;
  template <class V>
  void fields(V&& v) {
    v("val_dst", val_dst, Role::kWrite);
    v("idx_dst", idx_dst, Role::kWrite);
    v("src", src, Role::kRead);
    v("n", n, Role::kAttr);
  }
};

}  // namespace trnsim::isa
