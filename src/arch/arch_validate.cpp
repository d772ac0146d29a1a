// Validation of a chip config (validate()): per-field ranges from the schema, then
// the consistency of the fields with each other and with the published peak figures.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "arch/arch_detail.h"
#include "arch/schema.h"

namespace trnsim::arch {

using detail::Range;
using namespace config_detail;

namespace {

constexpr double kFp32Bytes = 4;
// Most SBUF + PSUM of one logical core: a run simulates each of its physical cores with all of
// its SBUF and PSUM in host memory (plus an eighth more for the initialisation map).
constexpr double kMaxSimulatedOnChipBytes = 8 * detail::kGiB;
constexpr double kBf16Bytes = 2;

// ---- validation -------------------------------------------------------------------------

// Text from a config (names, descriptions, sources) is printed as it is: a control character
// (NUL, an escape sequence, U+009B) would act on the terminal.
void check_printable(const std::string& path, const std::string& text) {
  if (const auto c = first_control_character(text)) {
    throw ConfigError(path, fmt::format("contains control character U+{:04X} (text is printed as "
                                        "written; control characters are not allowed)",
                                        static_cast<std::uint32_t>(*c)));
  }
}

// Per-field range and integrality checks, from each field's schema range; text is printable.
class RangeChecker {
 public:
  void text(const std::string& path, const std::string& s, const char*) const {
    if (path == "name" && s.empty()) throw ConfigError(path, "must not be empty");
    check_printable(path, s);
  }
  void generation(const std::string&, Generation, const char*) const {}
  void count(const std::string& path, int n, const Range& range, const char*) const {
    detail::check_range(path, n, range, "");
  }
  void count_list(const std::string& path, const std::vector<int>& list, const Range& range,
                  const char*) const {
    if (list.empty()) throw ConfigError(path, "must list at least one value");
    for (std::size_t i = 0; i < list.size(); ++i) {
      detail::check_range(fmt::format("{}[{}]", path, i), list[i], range, "");
    }
  }
  void flag(const std::string&, bool, const char*) const {}
  void param(const std::string& path, const Param& p, const Range& range, const char* unit,
             const char*) const {
    detail::check_range(path, p.value, range, unit);
    check_printable(path + ".source", p.source);
  }
  void optional_param(const std::string& path, const std::optional<Param>& p, const Range& range,
                      const char* unit, const char* meaning) const {
    if (p) param(path, *p, range, unit, meaning);
  }
  void figures(const std::string& path, const std::map<std::string, PublishedFigure>& figures,
               const char*) const {
    const auto& modes = peak_modes();
    for (const auto& [mode, figure] : figures) {
      const std::string figure_path = path + "." + mode;
      if (std::find(modes.begin(), modes.end(), mode) == modes.end()) {
        throw ConfigError(figure_path, "unknown mode; the modes are " + join(modes));
      }
      detail::check_range(figure_path, figure.value, detail::kPublishedTflops, "TFLOPS");
      check_printable(figure_path + ".source", figure.source);
      check_printable(figure_path + ".discrepancy", figure.discrepancy);
      if (!(figure.tolerance >= 0 && figure.tolerance < 1)) {
        throw ConfigError(figure_path + ".tolerance",
                          "must be a fraction in [0, 1), got " + format_number(figure.tolerance));
      }
      if (figure.tolerance > kDefaultPublishedTolerance && figure.discrepancy.empty()) {
        throw ConfigError(figure_path + ".discrepancy",
                          fmt::format("required: a tolerance above the default {:g}% must say why "
                                      "the published figure does not follow from the parameters",
                                      kDefaultPublishedTolerance * 100));
      }
    }
  }
};

std::string core_peak_formula(const ChipConfig& c, const std::string& mode) {
  const Param* rate = rate_for_mode(c, mode);
  return fmt::format("2 x {} rows x {} cols x {} GHz x rate {}", format_number(c.tensor.rows),
                     format_number(c.tensor.cols), format_number(c.tensor.clock_ghz),
                     format_number(rate->value));
}

void check_published(const std::string& path, const PublishedFigure& figure, double derived,
                     const std::string& formula, const std::string& mode) {
  if (derived <= 0) {
    throw ConfigError(path, fmt::format("a published {} figure is given but the config has no {} "
                                        "matmul (tensor.rate_{} = 0)",
                                        mode, mode, mode));
  }
  const double gap = std::fabs(figure.value - derived) / derived;
  // Tolerances are written with two digits; a hair of slack keeps 0.07 from failing at 6.999%.
  if (!(gap <= figure.tolerance + 1e-9)) {
    throw ConfigError(
        path, fmt::format("published {} TFLOPS contradicts the {:.1f} TFLOPS derived from {} "
                          "({:.1f}% apart, tolerance {:g}%); after changing those parameters, "
                          "update the figure or delete it with \"{}\": null",
                          format_number(figure.value), derived, formula, gap * 100,
                          figure.tolerance * 100, mode));
  }
}

void check_logical_cores(const ChipConfig& c) {
  for (std::size_t i = 1; i < c.lnc_options.size(); ++i) {
    if (c.lnc_options[i] <= c.lnc_options[i - 1]) {
      throw ConfigError("lnc_options", "must be strictly increasing, without repeats");
    }
  }
  if (c.lnc_options.front() != 1) {
    throw ConfigError("lnc_options", "must include 1 (one physical core per logical core)");
  }
  for (const int lnc : c.lnc_options) {
    if (c.cores_per_chip % lnc != 0) {
      throw ConfigError("lnc_options", fmt::format("{} does not divide cores_per_chip = {}", lnc,
                                                   c.cores_per_chip));
    }
  }
  if (!lnc_allowed(c, c.default_lnc)) {
    throw ConfigError("default_lnc", fmt::format("{} is not one of lnc_options", c.default_lnc));
  }
}

// A PSUM bank holds one accumulation group. Kernels size their PSUM tiles by it
// (nl.tile_size.psum_bank_fmax = bank bytes / 4 fp32), the compiler places PSUM tiles within
// banks, and before gen4 a matmul's output must lie within one bank.
void check_psum_banks(const ChipConfig& c) {
  const auto& p = c.psum;
  if (std::fmod(p.bytes_per_partition, p.banks) != 0) {
    throw ConfigError("psum.bytes_per_partition",
                      fmt::format("{} is not divisible into psum.banks = {} equal banks",
                                  format_number(p.bytes_per_partition), format_number(p.banks)));
  }
  const double bank = psum_bank_bytes(c);
  const double least = c.tensor.rows * kFp32Bytes;
  if (bank < least) {
    throw ConfigError(
        "psum.banks",
        fmt::format("{} banks of the {} bytes of PSUM per partition are {} byte{} each; a bank "
                    "must hold tensor.rows = {} fp32 accumulators ({} bytes): the {} x {} fp32 "
                    "result of one TensorE transpose or matmul tile accumulates in one bank, and "
                    "kernels size their PSUM tiles by the bank",
                    format_number(p.banks), format_number(p.bytes_per_partition),
                    format_number(bank), bank == 1 ? "" : "s", format_number(c.tensor.rows),
                    format_number(least), format_number(c.tensor.rows),
                    format_number(c.tensor.rows)));
  }
  if (std::fmod(bank, kFp32Bytes) != 0) {
    throw ConfigError("psum.banks",
                      fmt::format("{} banks of {} bytes each: a bank must hold whole 4-byte fp32 "
                                  "accumulators",
                                  format_number(p.banks), format_number(bank)));
  }
  const double largest_output = c.tensor.moving_free_max * kFp32Bytes;
  if (c.generation < Generation::kGen4 && largest_output > bank) {
    throw ConfigError(
        "tensor.moving_free_max",
        fmt::format("{} fp32 results per partition need {} bytes, more than one {}-byte PSUM "
                    "bank; before gen4 a matmul output must lie within one bank",
                    format_number(c.tensor.moving_free_max), format_number(largest_output),
                    format_number(bank)));
  }
}

void check_memories(const ChipConfig& c) {
  if (c.gpsimd.cores * c.gpsimd.partitions_per_core != c.sbuf.partitions) {
    throw ConfigError(
        "gpsimd.partitions_per_core",
        fmt::format("gpsimd.cores x partitions_per_core = {} x {} must cover the {} "
                    "SBUF partitions exactly",
                    format_number(c.gpsimd.cores), format_number(c.gpsimd.partitions_per_core),
                    format_number(c.sbuf.partitions)));
  }
  if (c.sbuf.total_bytes && c.sbuf.total_bytes->value != sbuf_bytes_per_core(c)) {
    throw ConfigError(
        "sbuf.total_bytes",
        fmt::format("{} but partitions x bytes_per_partition = {} x {} = {}",
                    format_number(c.sbuf.total_bytes->value), format_number(c.sbuf.partitions),
                    format_number(c.sbuf.bytes_per_partition),
                    format_number(sbuf_bytes_per_core(c))));
  }
  // In range (1..4096) by now, so the cast is exact.
  const auto alignment = static_cast<std::uint64_t>(c.sbuf.min_alignment_bytes.value);
  if ((alignment & (alignment - 1)) != 0) {
    throw ConfigError("sbuf.min_alignment_bytes",
                      fmt::format("must be a power of two, got {} (the compiler places tiles at "
                                  "multiples of it, and every access must start at a multiple of "
                                  "its element size)",
                                  alignment));
  }
  if (std::fmod(c.sbuf.bytes_per_partition, c.sbuf.min_alignment_bytes) != 0) {
    throw ConfigError("sbuf.bytes_per_partition",
                      fmt::format("{} is not a multiple of sbuf.min_alignment_bytes = {}",
                                  format_number(c.sbuf.bytes_per_partition),
                                  format_number(c.sbuf.min_alignment_bytes)));
  }
  check_psum_banks(c);

  const double per_core = sbuf_bytes_per_core(c) + psum_bytes_per_core(c);
  const int largest_lnc = c.lnc_options.back();  // strictly increasing
  if (largest_lnc * per_core > kMaxSimulatedOnChipBytes) {
    throw ConfigError(
        "lnc_options",
        fmt::format("a logical core of {} cores holds {} x {:g} MiB = {:g} GiB of SBUF and PSUM, "
                    "more than the {:g} GiB a run can simulate (every core's SBUF and PSUM are "
                    "held in host memory); lower the largest LNC or the memory sizes",
                    largest_lnc, largest_lnc, per_core / detail::kMiB,
                    largest_lnc * per_core / detail::kGiB,
                    kMaxSimulatedOnChipBytes / detail::kGiB));
  }
}

void check_tensor(const ChipConfig& c) {
  const auto& t = c.tensor;
  if (t.cols > c.psum.partitions || std::fmod(t.cols, 32) != 0) {
    throw ConfigError("tensor.cols",
                      fmt::format("must be a multiple of 32 up to psum.partitions = {} (columns "
                                  "become output partitions), got {}",
                                  format_number(c.psum.partitions), format_number(t.cols)));
  }
  if (t.moving_free_max * kFp32Bytes > c.psum.bytes_per_partition) {
    throw ConfigError(
        "tensor.moving_free_max",
        fmt::format("{} fp32 results per partition need {} bytes, more than the {} "
                    "bytes of PSUM per partition",
                    format_number(t.moving_free_max), format_number(t.moving_free_max * kFp32Bytes),
                    format_number(c.psum.bytes_per_partition)));
  }
  if (t.moving_free_max_bf16 * kBf16Bytes > c.psum.bytes_per_partition) {
    throw ConfigError("tensor.moving_free_max_bf16",
                      fmt::format("{} bf16 results per partition need {} bytes, more than the {} "
                                  "bytes of PSUM per partition",
                                  format_number(t.moving_free_max_bf16),
                                  format_number(t.moving_free_max_bf16 * kBf16Bytes),
                                  format_number(c.psum.bytes_per_partition)));
  }
  if (t.has_bf16_psum != (t.moving_free_max_bf16 > 0)) {
    throw ConfigError("tensor.moving_free_max_bf16",
                      t.has_bf16_psum ? "must be > 0 when tensor.has_bf16_psum is true"
                                      : "must be 0 when tensor.has_bf16_psum is false");
  }
  if (t.has_mx != (t.rate_mx > 0)) {
    throw ConfigError("tensor.rate_mx", t.has_mx ? "must be > 0 when tensor.has_mx is true"
                                                 : "must be 0 when tensor.has_mx is false");
  }
  if (t.power_ramp && t.power_ramp_us <= 0) {
    throw ConfigError("tensor.power_ramp_us", "must be > 0 when tensor.power_ramp is true");
  }
}

void check_dma(const ChipConfig& c) {
  if (c.dma.engine_peak_bytes_per_ns > c.dma.engine_bandwidth_gbps) {
    throw ConfigError("dma.engine_peak_bytes_per_ns",
                      fmt::format("achievable {} bytes/ns exceeds the theoretical {} GB/s of "
                                  "dma.engine_bandwidth_gbps",
                                  format_number(c.dma.engine_peak_bytes_per_ns),
                                  format_number(c.dma.engine_bandwidth_gbps)));
  }
  if (c.dma.small_transfer_bytes > c.dma.saturating_transfer_bytes) {
    throw ConfigError("dma.small_transfer_bytes", "must not exceed dma.saturating_transfer_bytes");
  }
}

void check_published_figures(const ChipConfig& c) {
  for (const auto& [mode, figure] : c.tensor.published_peak_tflops) {
    check_published("tensor.published_peak_tflops." + mode, figure, core_peak_tflops(c, mode),
                    core_peak_formula(c, mode), mode);
  }
  for (const auto& [mode, figure] : c.published_chip) {
    check_published("published_chip." + mode, figure, chip_peak_tflops(c, mode),
                    fmt::format("{} cores x {}", c.cores_per_chip, core_peak_formula(c, mode)),
                    mode);
  }
}

}  // namespace

void validate(const ChipConfig& c) {
  RangeChecker ranges;
  detail::visit_fields(c, ranges);
  for (const auto& [path, provenance] : c.provenance) {
    check_printable(path + ".source", provenance.source);
  }
  check_logical_cores(c);
  check_tensor(c);
  check_memories(c);
  check_dma(c);
  check_published_figures(c);
}

}  // namespace trnsim::arch
