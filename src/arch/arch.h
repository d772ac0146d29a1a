// Chip, core and system parameters of a Trainium-class device.
//
// Every number the simulator uses about the hardware lives here, not in code. Presets
// (trn1, trn2, trn3) ship as JSON in src/arch/presets/ and are embedded into the binary; a
// user file may start from a preset ("base") and override any field. Each parameter carries
// where it came from: a public source, or an explicit estimate flag when nothing is public.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace trnsim::arch {

// NKI's nc_version: gen2 = NeuronCore-v2 (Trainium1), gen3 = v3 (Trainium2), gen4 = v4 (Trainium3).
enum class Generation : std::uint8_t { kGen2 = 2, kGen3 = 3, kGen4 = 4 };

// A parameter value with its provenance. `estimate` is true when no public figure exists
// and the value is the model's guess; `source` names the public document otherwise.
struct Param {
  double value = 0.0;
  std::string source;
  bool estimate = false;
  operator double() const { return value; }  // NOLINT(google-explicit-constructor)
};

struct TensorEngineConfig {
  Param clock_ghz;              // PE array clock
  Param rows;                   // PE rows = max contraction (partition) per pass (128)
  Param cols;                   // PE columns = max stationary free size (128)
  Param moving_free_max;        // max moving free size per nc_matmul (fp32 PSUM output)
  Param moving_free_max_bf16;   // same with bf16 PSUM output (gen4)
  // Rows of the moving stream consumed per cycle, relative to one row/cycle, by input mode.
  // Peak FLOP/s = 2 * rows * cols * clock * rate.
  Param rate_fp32;              // 1/4 on all generations
  Param rate_bf16;              // BF16/FP16/TF32 (1 on gen2..gen4)
  Param rate_fp8;               // dense FP8 (2 on gen3/gen4 with double-row, 1 on gen2)
  Param rate_mx;                // MXFP8/MXFP4 (4 on gen4, 0 = unsupported)
  // Published per-core peaks in TFLOPS, checked against the rates above on load.
  std::map<std::string, Param> published_peak_tflops;  // keys: fp32, bf16, fp8, mx
  bool has_mx = false;
  bool has_bf16_psum = false;
  bool has_fp8_double_row = false;
  bool bit_accurate_transpose = false;
  Param fixed_overhead_cycles;        // dispatch cost on a dependent chain
  Param min_initiation_interval;      // min cycles between back-to-back matmuls
  Param load_stationary_speedup;      // fast LoadStationary (x faster than an MM of same free)
  bool power_ramp = false;            // dI/dt throttling model on by default
  Param power_ramp_start_fraction;    // utilisation limit at the start of work (~0.5)
  Param power_ramp_us;                // time to ramp to full (~3 us)
};

// Vector, Scalar (Activation) and GpSimd share this shape.
struct ElementwiseEngineConfig {
  Param clock_ghz;
  Param lanes;                    // parallel partitions (128)
  Param elems_per_cycle_16bit;    // elements per cycle across the engine, BF16/FP16/FP8 data
  Param elems_per_cycle_other;    // elements per cycle for 32-bit data
  Param fixed_overhead_cycles;    // static per-instruction overhead
  Param min_initiation_interval;  // MIN_II of the NKI cost formulas
  Param free_max_sbuf;            // max free elements per instruction reading SBUF
  Param free_max_psum;            // ... reading PSUM
};

struct GpSimdConfig {
  Param clock_ghz;
  Param cores;             // 8 programmable cores
  Param lane_bits;         // 512-bit SIMD per core
  Param partitions_per_core;  // 16
  Param startup_cycles;    // per-instruction startup (~150)
};

struct SbufConfig {
  Param partitions;            // 128
  Param bytes_per_partition;   // 192 KiB (gen2), 224 KiB (gen3), 256 KiB (gen4)
  Param min_alignment_bytes;
};

struct PsumConfig {
  Param partitions;            // 128
  Param bytes_per_partition;   // 16 KiB
  Param banks;                 // 8 banks of 2 KiB per partition
};

struct DmaConfig {
  Param engines_per_core;            // 16
  Param queues_per_engine;           // 16
  Param engine_bandwidth_gbps;       // theoretical per engine (GB/s = bytes/ns)
  Param engine_peak_bytes_per_ns;    // achievable per engine (bandwidth guide)
  Param fixed_latency_ns;            // descriptor setup + semaphore-to-start per transfer
  Param per_descriptor_ns;           // cost per contiguous buffer (estimate)
  Param small_transfer_bytes;        // below this per partition the transfer is overhead-bound
  Param hwdge_instruction_ns;        // HW descriptor generation per dma instruction
  bool has_near_memory_accumulate = false;  // gen4 SBUF read-add-write
  bool has_priority = false;                // gen4 QoS classes
};

struct HbmConfig {
  Param capacity_gib;
  Param bandwidth_gbps;   // chip total
  Param stacks;
};

struct LinkConfig {
  Param neuronlink_gbps_per_chip;
  Param ports;
};

struct ChipConfig {
  std::string name;                 // preset or file name
  std::string description;
  Generation generation = Generation::kGen4;
  int cores_per_chip = 0;
  std::vector<int> lnc_options;     // allowed logical-core sizes, e.g. {1, 2}
  TensorEngineConfig tensor;
  ElementwiseEngineConfig vector;
  ElementwiseEngineConfig scalar;
  GpSimdConfig gpsimd;
  SbufConfig sbuf;
  PsumConfig psum;
  DmaConfig dma;
  HbmConfig hbm;
  LinkConfig link;
  // Published chip-level totals (TFLOPS per dtype class, HBM TB/s), checked against derived.
  std::map<std::string, Param> published_chip;
};

// Raised for any bad configuration: `field` is the JSON path ("sbuf.bytes_per_partition").
class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string field, std::string why);
  const std::string& field() const { return field_; }
 private:
  std::string field_;
};

std::vector<std::string> preset_names();          // {"trn1", "trn2", "trn3"}
ChipConfig load_preset(const std::string& name);  // throws ConfigError for unknown names
// A file whose "base" names a preset, overriding fields; or a complete config.
ChipConfig load_file(const std::string& path);
ChipConfig load_json(const nlohmann::json& j, const std::string& origin);
// A preset name or a path to a JSON file.
ChipConfig load(const std::string& preset_or_path);
nlohmann::json to_json(const ChipConfig& c);

// Figures derived from the parameters (never stored, always computed).
double core_peak_tflops(const ChipConfig& c, const std::string& mode);  // fp32|bf16|fp8|mx
double chip_peak_tflops(const ChipConfig& c, const std::string& mode);
double sbuf_bytes_per_core(const ChipConfig& c);
double psum_bytes_per_core(const ChipConfig& c);
double hbm_bytes_per_ns_per_core(const ChipConfig& c);  // fair share of chip HBM bandwidth
double dma_bytes_per_ns_per_core(const ChipConfig& c);

}  // namespace trnsim::arch
