// Chip configurations (docs/arch-config.md): generation names, the helpers the other files
// share (arch_detail.h) and the figures derived from a config. Decoding, encoding, validation
// and loading are in arch_decode.cpp, arch_encode.cpp, arch_validate.cpp and arch_load.cpp.
#include "arch/arch.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string_view>

#include "arch/arch_detail.h"
#include "util/edit_distance.h"

namespace trnsim::arch {

// A message quotes what a file says (keys, names, JSON text): its control characters are
// escaped so that none reaches a terminal.
ConfigError::ConfigError(const std::string& field, const std::string& why,
                         util::SourceLocation where)
    : util::Error(util::Diagnostic{
          std::move(where),
          config_detail::escape_control(field.empty() ? why : field + ": " + why)}),
      field_(config_detail::escape_control(field)),
      why_(config_detail::escape_control(why)) {}

std::string generation_name(Generation g) {
  return fmt::format("gen{}", static_cast<int>(g));
}

std::string core_name(Generation g) {
  return fmt::format("NeuronCore-v{}", static_cast<int>(g));
}

namespace config_detail {

// ---- small helpers ----------------------------------------------------------------------

std::string describe_value(const json& v) {
  std::string text = v.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return fmt::format("{} {}", v.type_name(), text);
}

std::string format_number(double v) {
  if (std::isfinite(v) && std::floor(v) == v && std::fabs(v) < 1e15) {
    return std::to_string(static_cast<std::int64_t>(v));
  }
  return json(v).dump();
}

std::optional<char32_t> first_control_character(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x20 || byte == 0x7f) return byte;
    // U+0080..U+009F (C1, e.g. U+009B, a one-character CSI) are 0xC2 0x80..0x9F in UTF-8.
    if (byte == 0xc2 && i + 1 < text.size()) {
      const auto next = static_cast<unsigned char>(text[i + 1]);
      if (next >= 0x80 && next <= 0x9f) return next;
    }
  }
  return std::nullopt;
}

std::string escape_control(std::string_view text) {
  if (!first_control_character(text)) return std::string(text);
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\u{:04x}", byte);
    } else if (byte == 0xc2 && next >= 0x80 && next <= 0x9f) {
      out += fmt::format("\\u{:04x}", next);
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string shorten(std::string_view name) {
  constexpr std::size_t kMax = 64;
  constexpr std::size_t kKept = 48;
  if (name.size() <= kMax) return std::string(name);
  std::size_t cut = kKept;
  // Not inside a UTF-8 sequence: back up over continuation bytes.
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xc0) == 0x80) --cut;
  return fmt::format("{}...({} bytes)", name.substr(0, cut), name.size());
}

using util::edit_distance;

std::string closest(std::string_view name, const std::vector<std::string>& candidates) {
  return util::closest(name, candidates, /*prefixes_are_close=*/true);
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  const std::string near = closest(name, candidates);
  return near.empty() ? std::string() : "; did you mean \"" + near + "\"?";
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

const Param* rate_for_mode(const ChipConfig& c, const std::string& mode) {
  if (mode == "fp32") return &c.tensor.rate_fp32;
  if (mode == "bf16") return &c.tensor.rate_bf16;
  if (mode == "fp8") return &c.tensor.rate_fp8;
  if (mode == "mx") return &c.tensor.rate_mx;
  return nullptr;
}

}  // namespace config_detail

using config_detail::join;
using config_detail::rate_for_mode;

// ---- derived figures --------------------------------------------------------------------

const std::vector<std::string>& peak_modes() {
  static const std::vector<std::string> modes = {"fp32", "bf16", "fp8", "mx"};
  return modes;
}

double core_peak_tflops(const ChipConfig& c, const std::string& mode) {
  const Param* rate = rate_for_mode(c, mode);
  if (rate == nullptr) {
    throw std::invalid_argument(
        fmt::format("unknown TensorE mode \"{}\"; the modes are {}", mode, join(peak_modes())));
  }
  // 2 FLOP (multiply + add) per PE per moving row; GHz x 1e9 / 1e12 = / 1000.
  return 2.0 * c.tensor.rows * c.tensor.cols * c.tensor.clock_ghz * rate->value / 1000.0;
}

double chip_peak_tflops(const ChipConfig& c, const std::string& mode) {
  return c.cores_per_chip * core_peak_tflops(c, mode);
}

double sbuf_bytes_per_core(const ChipConfig& c) {
  return c.sbuf.partitions * c.sbuf.bytes_per_partition;
}

double psum_bytes_per_core(const ChipConfig& c) {
  return c.psum.partitions * c.psum.bytes_per_partition;
}

double psum_bank_bytes(const ChipConfig& c) {
  return c.psum.bytes_per_partition / c.psum.banks;
}

double hbm_bytes_per_ns_per_core(const ChipConfig& c) {
  return c.hbm.bandwidth_gbps / c.cores_per_chip;  // GB/s is bytes/ns
}

std::uint64_t hbm_capacity_bytes(const ChipConfig& c) {
  // Validation bounds capacity_gib to 0.01..1048576 GiB; the clamps keep a config built in
  // code without validation from an out-of-range cast.
  const double bytes = c.hbm.capacity_gib.value * 1024.0 * 1024.0 * 1024.0;
  if (!(bytes >= 1)) return 1;
  return bytes < 0x1p64 ? static_cast<std::uint64_t>(bytes) : UINT64_MAX;
}

double dma_bytes_per_ns_per_core(const ChipConfig& c) {
  return c.dma.engines_per_core * c.dma.engine_peak_bytes_per_ns;
}

bool lnc_allowed(const ChipConfig& c, int lnc) {
  return std::find(c.lnc_options.begin(), c.lnc_options.end(), lnc) != c.lnc_options.end();
}

}  // namespace trnsim::arch
