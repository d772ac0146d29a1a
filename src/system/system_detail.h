// Internals of the system config shared by its files (not part of system/system.h): the ranges
// of its fields and the rule for names. system_config.cpp: decoding, encoding, presets and
// files; system_validate.cpp: validate().
#pragma once

#include <string>

#include "arch/config_json.h"
#include "system/system.h"

namespace trnsim::system::detail {

using arch::detail::integers;
using arch::detail::Range;
using arch::detail::reals;

inline constexpr Range kBandwidthGbps = reals(1e-3, 1e9);  // 1 MB/s .. 1 EB/s
inline constexpr Range kLatencyNs = reals(0, 1e9);         // up to one second
inline constexpr Range kDimensionSize = integers(1, 65536);
inline constexpr Range kInstances = integers(1, 65536);
inline constexpr Range kLevel = integers(1, 16);
inline constexpr const char* kNeuronlinkFigure = "neuronlink_gbps_per_chip";

// A name a config gives to a dimension, link or switch: it appears in messages, drawings and
// JSON paths. Throws ConfigError on `path` unless it is 1 to 32 letters, digits, _ or -.
void check_name(const std::string& path, const std::string& name);

}  // namespace trnsim::system::detail
