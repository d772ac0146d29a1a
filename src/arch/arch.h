// Chip, core and system parameters of a Trainium-class device.
//
// Every number the simulator uses about the hardware lives here, not in code. Presets
// (trn1, trn2, trn3) ship as JSON in src/arch/presets/ and are embedded into the binary; a
// user file may start from a preset ("base") and override any field. Each parameter carries
// where it came from: a public source, or an explicit estimate flag when nothing is public.
// The file format, every field and every error are described in docs/arch-config.md.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "util/diagnostic.h"

namespace trnsim::arch {

// NKI's nc_version: gen2 = NeuronCore-v2 (Trainium1), gen3 = v3 (Trainium2), gen4 = v4 (Trainium3).
enum class Generation : std::uint8_t { kGen2 = 2, kGen3 = 3, kGen4 = 4 };

std::string generation_name(Generation g);  // "gen2", "gen3", "gen4" (the JSON spelling)
std::string core_name(Generation g);        // "NeuronCore-v2", ...

// A parameter value with its provenance. `estimate` is true when no public figure exists
// and the value is the model's guess; `source` names the public document otherwise (for an
// estimate it says what the guess rests on).
struct Param {
  double value = 0.0;
  std::string source;
  bool estimate = false;
  operator double() const { return value; }  // NOLINT(google-explicit-constructor)
  bool operator==(const Param&) const = default;
};

// Relative gap allowed between a published figure and the value derived from the parameters
// when the figure does not say otherwise: published figures are rounded to 2-3 digits.
inline constexpr double kDefaultPublishedTolerance = 0.03;

// A published figure (a peak TFLOPS number) that loading checks against the derived value.
// A figure that is known not to follow from the parameters keeps its published value, states
// the wider `tolerance` it needs and, mandatory in that case, the `discrepancy` explaining why.
struct PublishedFigure : Param {
  double tolerance = kDefaultPublishedTolerance;  // allowed |published - derived| / derived
  std::string discrepancy;
  bool operator==(const PublishedFigure&) const = default;
};

// Provenance of a field that is not a Param (counts, flags, lists), kept by JSON path.
struct Provenance {
  std::string source;
  bool estimate = false;
  bool operator==(const Provenance&) const = default;
};

struct TensorEngineConfig {
  Param clock_ghz;             // PE array clock
  Param rows;                  // PE rows = max contraction (partition) per pass (128)
  Param cols;                  // PE columns = max stationary free size (128)
  Param moving_free_max;       // max moving free size per nc_matmul (fp32 PSUM output)
  Param moving_free_max_bf16;  // same with bf16 PSUM output (gen4; 0 = no bf16 PSUM output)
  // Rows of the moving stream consumed per cycle, relative to one row/cycle, by input mode.
  // Peak FLOP/s = 2 * rows * cols * clock * rate.
  Param rate_fp32;  // 1/4 on all generations
  Param rate_bf16;  // BF16/FP16/TF32 (1 on gen2..gen4)
  Param rate_fp8;   // dense FP8 (2 on gen3/gen4 with double-row, 1 on gen2)
  Param rate_mx;    // MXFP8/MXFP4 (4 on gen4, 0 = unsupported)
  // Published per-core peaks in TFLOPS, checked against the rates above on load.
  std::map<std::string, PublishedFigure> published_peak_tflops;  // keys: fp32, bf16, fp8, mx
  bool has_mx = false;
  bool has_bf16_psum = false;
  bool has_fp8_double_row = false;
  bool bit_accurate_transpose = false;
  Param fixed_overhead_cycles;      // dispatch cost on a dependent chain
  Param min_initiation_interval;    // min cycles between back-to-back matmuls
  Param load_stationary_speedup;    // fast LoadStationary (x faster than an MM of same free)
  bool power_ramp = false;          // dI/dt throttling model on by default
  Param power_ramp_start_fraction;  // utilisation limit at the start of work (~0.5)
  Param power_ramp_us;              // time to ramp to full (~3 us)
  Param power_ramp_window_us;       // low-utilisation window that re-engages the limit
  bool operator==(const TensorEngineConfig&) const = default;
};

// Vector, Scalar (Activation) and GpSimd share this shape.
struct ElementwiseEngineConfig {
  Param clock_ghz;
  Param lanes;                    // parallel partitions (128)
  Param elems_per_cycle_16bit;    // elements per cycle across the engine, BF16/FP16/FP8 data
  Param elems_per_cycle_other;    // elements per cycle for 32-bit data
  Param fixed_overhead_cycles;    // static per-instruction overhead
  Param access_overhead_cycles;   // static cost of one SBUF/PSUM tensor access request
  Param min_initiation_interval;  // MIN_II of the NKI cost formulas
  Param free_max_sbuf;            // max free elements per instruction reading SBUF
  Param free_max_psum;            // ... reading PSUM
  bool operator==(const ElementwiseEngineConfig&) const = default;
};

struct GpSimdConfig {
  Param clock_ghz;
  Param cores;                // 8 programmable cores
  Param lane_bits;            // 512-bit SIMD per core
  Param partitions_per_core;  // 16
  Param startup_cycles;       // per-instruction startup (~150)
  Param tcm_bytes_per_core;   // private tightly-coupled memory per core
  Param integrated_dma_gbps;  // total bandwidth of the cores' own DMA (gen3+; 0 = none)
  bool operator==(const GpSimdConfig&) const = default;
};

struct SbufConfig {
  Param partitions;           // 128
  Param bytes_per_partition;  // 192 KiB (gen2), 224 KiB (gen3), 256 KiB (gen4)
  Param min_alignment_bytes;
  // Optional stated total per core; when given it must equal partitions * bytes_per_partition.
  std::optional<Param> total_bytes;
  bool operator==(const SbufConfig&) const = default;
};

struct PsumConfig {
  Param partitions;           // 128
  Param bytes_per_partition;  // 16 KiB
  Param banks;                // 8 banks of 2 KiB per partition
  bool operator==(const PsumConfig&) const = default;
};

struct DmaConfig {
  Param engines_per_core;           // 16
  Param queues_per_engine;          // 16
  Param engine_bandwidth_gbps;      // theoretical per engine (GB/s = bytes/ns)
  Param engine_peak_bytes_per_ns;   // achievable per engine (bandwidth guide)
  Param fixed_latency_ns;           // descriptor setup + semaphore-to-start per transfer
  Param per_descriptor_ns;          // cost per contiguous buffer (estimate)
  Param small_transfer_bytes;       // below this per partition the transfer is overhead-bound
  Param saturating_transfer_bytes;  // from this per partition on, the engine runs at peak
  Param hwdge_instruction_ns;       // HW descriptor generation per dma instruction (0 = none)
  Param dge_instances_per_core;     // hardware descriptor generators (0 on gen2)
  bool has_near_memory_accumulate = false;  // gen4 SBUF read-add-write
  bool has_priority = false;                // gen4 QoS classes
  bool operator==(const DmaConfig&) const = default;
};

struct HbmConfig {
  Param capacity_gib;
  Param bandwidth_gbps;  // chip total
  Param stacks;
  bool operator==(const HbmConfig&) const = default;
};

struct LinkConfig {
  Param neuronlink_gbps_per_chip;
  Param ports;
  bool operator==(const LinkConfig&) const = default;
};

struct ChipConfig {
  std::string name;  // preset or file name
  std::string description;
  Generation generation = Generation::kGen4;
  int cores_per_chip = 0;
  std::vector<int> lnc_options;  // allowed logical-core sizes, e.g. {1, 2}
  int default_lnc = 1;           // the runtime's default logical-core size
  TensorEngineConfig tensor;
  ElementwiseEngineConfig vector;
  ElementwiseEngineConfig scalar;
  GpSimdConfig gpsimd;
  SbufConfig sbuf;
  PsumConfig psum;
  DmaConfig dma;
  HbmConfig hbm;
  LinkConfig link;
  // Published chip-level peak TFLOPS by mode (fp32, bf16, fp8, mx), checked against
  // chip_peak_tflops.
  std::map<std::string, PublishedFigure> published_chip;
  // Sources of the fields that are not Params (cores_per_chip, lnc_options, default_lnc and
  // the feature flags), keyed by JSON path, e.g. "tensor.has_mx".
  std::map<std::string, Provenance> provenance;

  bool operator==(const ChipConfig&) const = default;
};

// Raised for any bad configuration: `field` is the JSON path ("sbuf.bytes_per_partition"),
// empty when the problem is the file as a whole; `where` the file (and the line and column of
// a JSON syntax error) when known. what() is "file:line:col: error: field: why". Control
// characters in field and why (quoted from a file) are escaped as \uXXXX.
class ConfigError : public util::Error {
 public:
  ConfigError(const std::string& field, const std::string& why, util::SourceLocation where = {});
  const std::string& field() const { return field_; }
  const std::string& why() const { return why_; }
  const util::SourceLocation& where() const { return diagnostics().front().where; }

 private:
  std::string field_;
  std::string why_;
};

std::vector<std::string> preset_names();          // {"trn1", "trn2", "trn3"}
ChipConfig load_preset(const std::string& name);  // throws ConfigError for unknown names
// The preset's JSON text exactly as embedded at build time (src/arch/presets/<name>.json).
const std::string& preset_json_text(const std::string& name);
// A file whose "base" names a preset, overriding fields; or a complete config.
ChipConfig load_file(const std::string& path);
// Parses JSON text (line/column in the error on invalid JSON), then as load_json.
ChipConfig load_json_text(const std::string& text, const std::string& origin);
// `origin` names where the JSON came from; plain-number parameters get "set in <origin>" as
// their source.
ChipConfig load_json(const nlohmann::json& j, const std::string& origin);
// A preset name or a path to a JSON file.
ChipConfig load(const std::string& preset_or_path);
// The complete config: every parameter as {"value", "source"/"estimate"}; load_json of the
// result gives back an identical ChipConfig.
nlohmann::json to_json(const ChipConfig& c);
// Checks ranges, integrality and consistency (including published peaks); throws ConfigError.
// The loaders call it; code that builds or edits a ChipConfig can call it too.
void validate(const ChipConfig& c);

// One field of the format, for documentation and tools (`trnsim config` and the doc test).
struct FieldInfo {
  std::string path;   // "tensor.clock_ghz"
  std::string kind;   // "number", "integer", "true or false", "string", ...
  std::string range;  // the values accepted: "0.01..100", "0 or 0.001..64", "128"; "" if none
  std::string unit;   // "GHz", "bytes", "" when dimensionless
  std::string meaning;
};
std::vector<FieldInfo> describe_fields();

// TensorE modes with a peak figure, in display order: {"fp32", "bf16", "fp8", "mx"}.
const std::vector<std::string>& peak_modes();

// Figures derived from the parameters (never stored, always computed).
// Modes are those of peak_modes(); an unsupported mode (mx before gen4) gives 0; an unknown
// mode throws std::invalid_argument.
double core_peak_tflops(const ChipConfig& c, const std::string& mode);  // fp32|bf16|fp8|mx
double chip_peak_tflops(const ChipConfig& c, const std::string& mode);
double sbuf_bytes_per_core(const ChipConfig& c);
double psum_bytes_per_core(const ChipConfig& c);
double psum_bank_bytes(const ChipConfig& c);            // bytes per partition of one bank
double hbm_bytes_per_ns_per_core(const ChipConfig& c);  // fair share of chip HBM bandwidth
std::uint64_t hbm_capacity_bytes(const ChipConfig& c);  // hbm.capacity_gib in bytes (>= 1)
double dma_bytes_per_ns_per_core(const ChipConfig& c);  // engines x achievable per-engine peak
bool lnc_allowed(const ChipConfig& c, int lnc);

}  // namespace trnsim::arch
