// Chip presets for tests in every layer, each loaded once per test binary.
#pragma once

#include "arch/arch.h"

namespace trnsim::arch::testing {

inline const ChipConfig& trn3() {
  static const ChipConfig chip = load_preset("trn3");
  return chip;
}

inline const ChipConfig& trn2() {
  static const ChipConfig chip = load_preset("trn2");
  return chip;
}

}  // namespace trnsim::arch::testing
