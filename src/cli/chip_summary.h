// A readable summary of a chip configuration (used by `trnsim config show` and the demo).
#pragma once

#include "arch/arch.h"

namespace trnsim::cli {

// Prints cores, clocks, memories, peaks per mode (derived beside published), HBM, DMA,
// links, LNC and the list of estimated parameters to stdout.
void print_chip_summary(const trnsim::arch::ChipConfig& chip);

}  // namespace trnsim::cli
