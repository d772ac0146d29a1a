// The one description of the chip-config format (internal to trnsim_arch).
//
// visit_fields() names every field with its JSON path, range, unit and meaning. Decoding,
// encoding, range validation, unknown-field detection and describe_fields() are all visitors
// over it, so a new field is added in exactly one place (plus the presets and the docs).
#pragma once

#include <string>

#include "arch/arch.h"
#include "arch/config_json.h"

namespace trnsim::arch::detail {

// Ranges shared by several fields.
constexpr double kKiB = 1024;
constexpr double kMiB = 1024 * kKiB;
constexpr double kGiB = 1024 * kMiB;
constexpr Range kClockGhz = reals(0.01, 100);
constexpr Range kCycles = reals(0, 1e6);            // overheads: up to 1e6 cycles
constexpr Range kIntervalCycles = reals(1, 1e6);    // at least one cycle
constexpr Range kLatencyNs = reals(0, 1e9);         // up to one second
constexpr Range kRampUs = reals(0, 1e6);            // up to one second
constexpr Range kBandwidthGbps = reals(1e-3, 1e9);  // 1 MB/s .. 1 EB/s
constexpr Range kTensorRate = reals(1e-3, 64);      // moving rows per cycle
constexpr Range kElementsPerCycle = integers(1, 65536);
constexpr Range kFreeElements = integers(1, 16 * kMiB);
constexpr Range kUnits = integers(1, 1024);  // engines, queues, ports, stacks, cores
constexpr Range kIsaPartitions = {true, 128, 128, false,
                                  "the ISA's partition rules (start partitions 0/32/64/96, "
                                  "32-partition quadrants) assume 128"};
// Published peaks (TFLOPS) and their tolerance.
constexpr Range kPublishedTflops = reals(1e-3, 1e9);

// Visitor interface (duck-typed; Config may be const):
//   text(path, std::string&, meaning)
//   generation(path, Generation&, meaning)
//   count(path, int&, Range, meaning)                    integer with provenance
//   count_list(path, std::vector<int>&, Range, meaning)  list of integers with provenance
//   flag(path, bool&, meaning)                           boolean with provenance
//   param(path, Param&, Range, unit, meaning)
//   optional_param(path, std::optional<Param>&, Range, unit, meaning)
//   figures(path, std::map<std::string, PublishedFigure>&, meaning)
template <class Engine, class Visitor>
void visit_elementwise(const std::string& prefix, Engine& e, Visitor& v) {
  v.param(prefix + ".clock_ghz", e.clock_ghz, kClockGhz, "GHz", "engine clock");
  v.param(prefix + ".lanes", e.lanes, kIsaPartitions, "partitions",
          "parallel lanes, one SBUF/PSUM partition each");
  v.param(prefix + ".elems_per_cycle_16bit", e.elems_per_cycle_16bit, kElementsPerCycle,
          "elements/cycle", "peak elements per cycle across the engine for 16-bit (and FP8) data");
  v.param(prefix + ".elems_per_cycle_other", e.elems_per_cycle_other, kElementsPerCycle,
          "elements/cycle", "peak elements per cycle across the engine for 32-bit data");
  v.param(prefix + ".fixed_overhead_cycles", e.fixed_overhead_cycles, kCycles, "engine cycles",
          "static overhead of one instruction (dependent or tiny instructions)");
  v.param(prefix + ".access_overhead_cycles", e.access_overhead_cycles, kCycles, "engine cycles",
          "static cost of one SBUF/PSUM tensor access request");
  v.param(prefix + ".min_initiation_interval", e.min_initiation_interval, kIntervalCycles,
          "engine cycles", "MIN_II: the floor of the per-instruction cost formulas");
  v.param(prefix + ".free_max_sbuf", e.free_max_sbuf, kFreeElements, "elements",
          "largest free size of one instruction reading SBUF");
  v.param(prefix + ".free_max_psum", e.free_max_psum, kFreeElements, "elements",
          "largest free size of one instruction reading PSUM");
}

template <class Tensor, class Visitor>
void visit_tensor(Tensor& t, Visitor& v) {
  v.param("tensor.clock_ghz", t.clock_ghz, kClockGhz, "GHz", "TensorE (PE array) clock");
  v.param("tensor.rows", t.rows, kIsaPartitions, "PEs",
          "PE rows = contraction (partition) size of one pass");
  v.param("tensor.cols", t.cols, integers(32, 128), "PEs",
          "PE columns = largest stationary free size = output partitions");
  v.param("tensor.moving_free_max", t.moving_free_max, integers(1, 65536), "elements",
          "largest moving free size of one matmul with fp32 PSUM output");
  v.param("tensor.moving_free_max_bf16", t.moving_free_max_bf16, integers(0, 65536), "elements",
          "largest moving free size with bf16 PSUM output (0 = no bf16 output)");
  v.param("tensor.rate_fp32", t.rate_fp32, kTensorRate, "rows/cycle",
          "moving rows per cycle for fp32 inputs, relative to one row per cycle");
  v.param("tensor.rate_bf16", t.rate_bf16, kTensorRate, "rows/cycle",
          "moving rows per cycle for bf16/fp16/tf32 inputs");
  v.param("tensor.rate_fp8", t.rate_fp8, kTensorRate, "rows/cycle",
          "moving rows per cycle for dense fp8 inputs (double-row mode where available)");
  v.param("tensor.rate_mx", t.rate_mx, reals_or_zero(1e-3, 64), "rows/cycle",
          "moving rows per cycle for MXFP8/MXFP4 inputs (0 = no MX matmul)");
  v.figures("tensor.published_peak_tflops", t.published_peak_tflops,
            "published per-core peak TFLOPS by mode, checked against the rates");
  v.flag("tensor.has_mx", t.has_mx, "MX matmul (nc_matmul_mx) available");
  v.flag("tensor.has_bf16_psum", t.has_bf16_psum, "matmul may write/accumulate bf16 in PSUM");
  v.flag("tensor.has_fp8_double_row", t.has_fp8_double_row, "double-row FP8 perf mode");
  v.flag("tensor.bit_accurate_transpose", t.bit_accurate_transpose,
         "TensorE transpose preserves every bit (NaN/Inf included)");
  v.param("tensor.fixed_overhead_cycles", t.fixed_overhead_cycles, kCycles, "TensorE cycles",
          "latency a dependent instruction waits after a matmul issues");
  v.param("tensor.min_initiation_interval", t.min_initiation_interval, kIntervalCycles,
          "TensorE cycles", "minimum cycles between back-to-back matmuls (MM_INIT_LATENCY)");
  v.param("tensor.load_stationary_speedup", t.load_stationary_speedup, reals(0.01, 100), "x",
          "how much faster LoadStationary is than a MultiplyMoving of the same free size");
  v.flag("tensor.power_ramp", t.power_ramp, "dI/dt throttling ramp modelled by default");
  v.param("tensor.power_ramp_start_fraction", t.power_ramp_start_fraction, reals(0.01, 1), "",
          "utilisation limit when work starts");
  v.param("tensor.power_ramp_us", t.power_ramp_us, kRampUs, "us",
          "time to ramp from the start fraction to full utilisation");
  v.param("tensor.power_ramp_window_us", t.power_ramp_window_us, kRampUs, "us",
          "window of low utilisation after which the limit re-engages");
}

template <class Config, class Visitor>
void visit_gpsimd_and_memories(Config& c, Visitor& v) {
  auto& g = c.gpsimd;
  v.param("gpsimd.clock_ghz", g.clock_ghz, kClockGhz, "GHz", "GpSimd clock");
  v.param("gpsimd.cores", g.cores, integers(1, 128), "cores", "programmable SIMD cores");
  v.param("gpsimd.lane_bits", g.lane_bits, integers(1, 65536), "bits", "SIMD width of one core");
  v.param("gpsimd.partitions_per_core", g.partitions_per_core, integers(1, 128), "partitions",
          "SBUF partitions wired to one core");
  v.param("gpsimd.startup_cycles", g.startup_cycles, kCycles, "GpSimd cycles",
          "startup cost of one instruction");
  v.param("gpsimd.tcm_bytes_per_core", g.tcm_bytes_per_core, integers(0, kGiB), "bytes",
          "tightly-coupled memory of one core");
  v.param("gpsimd.integrated_dma_gbps", g.integrated_dma_gbps, reals_or_zero(1e-3, 1e9), "GB/s",
          "total bandwidth of the cores' integrated DMA (0 = none)");

  auto& s = c.sbuf;
  v.param("sbuf.partitions", s.partitions, kIsaPartitions, "partitions",
          "SBUF partitions (the ISA needs 128)");
  v.param("sbuf.bytes_per_partition", s.bytes_per_partition, integers(kKiB, 16 * kMiB), "bytes",
          "SBUF bytes in each partition");
  v.param("sbuf.min_alignment_bytes", s.min_alignment_bytes, integers(1, 4096), "bytes",
          "alignment of SBUF tensor start offsets");
  v.optional_param("sbuf.total_bytes", s.total_bytes, integers(128 * kKiB, 2 * kGiB), "bytes",
                   "optional stated SBUF total per core; must equal partitions x bytes");

  auto& p = c.psum;
  v.param("psum.partitions", p.partitions, kIsaPartitions, "partitions",
          "PSUM partitions (the ISA needs 128)");
  v.param("psum.bytes_per_partition", p.bytes_per_partition, integers(512, kMiB), "bytes",
          "PSUM bytes in each partition");
  v.param("psum.banks", p.banks, integers(1, 65536), "banks",
          "PSUM banks (accumulation groups in flight)");
}

template <class Dma, class Visitor>
void visit_dma(Dma& d, Visitor& v) {
  v.param("dma.engines_per_core", d.engines_per_core, kUnits, "engines",
          "DMA engines serving one core");
  // The ISA numbers a DMA queue with one byte (isa::QueueId::index).
  v.param("dma.queues_per_engine", d.queues_per_engine, integers(1, 256), "queues",
          "in-order queues per engine");
  v.param("dma.engine_bandwidth_gbps", d.engine_bandwidth_gbps, kBandwidthGbps, "GB/s",
          "theoretical bandwidth of one engine");
  v.param("dma.engine_peak_bytes_per_ns", d.engine_peak_bytes_per_ns, kBandwidthGbps, "bytes/ns",
          "achievable bandwidth of one engine on large transfers");
  v.param("dma.fixed_latency_ns", d.fixed_latency_ns, kLatencyNs, "ns",
          "descriptor setup and semaphore-to-start latency of one transfer");
  v.param("dma.per_descriptor_ns", d.per_descriptor_ns, kLatencyNs, "ns",
          "cost of each contiguous buffer of a transfer");
  v.param("dma.small_transfer_bytes", d.small_transfer_bytes, integers(1, kGiB), "bytes",
          "below this many bytes per partition a transfer is overhead-bound");
  v.param("dma.saturating_transfer_bytes", d.saturating_transfer_bytes, integers(1, kGiB), "bytes",
          "from this many bytes per partition on an engine reaches its peak");
  v.param("dma.hwdge_instruction_ns", d.hwdge_instruction_ns, kLatencyNs, "ns",
          "cost of one hardware-DGE DMA instruction on the issuing engine (0 = no HWDGE)");
  v.param("dma.dge_instances_per_core", d.dge_instances_per_core, integers(0, 1024), "instances",
          "hardware descriptor generators per core");
  v.flag("dma.has_near_memory_accumulate", d.has_near_memory_accumulate,
         "DMA can read-add-write into SBUF");
  v.flag("dma.has_priority", d.has_priority, "DMA queues have QoS priority classes");
}

// Every field of a chip config, in the order of the preset files, with its JSON path,
// kind, unit and meaning.
template <class Config, class Visitor>
void visit_fields(Config& c, Visitor& v) {
  v.text("name", c.name, "preset name, or the file the config was loaded from");
  v.text("description", c.description, "one-line description");
  v.generation("generation", c.generation, "NeuronCore generation (NKI nc_version)");
  v.count("cores_per_chip", c.cores_per_chip, kUnits, "physical NeuronCores per chip");
  v.count_list("lnc_options", c.lnc_options, kUnits,
               "allowed logical NeuronCore sizes (physical cores per logical core)");
  v.count("default_lnc", c.default_lnc, kUnits,
          "logical NeuronCore size the runtime uses by default");
  visit_tensor(c.tensor, v);
  visit_elementwise("vector", c.vector, v);
  visit_elementwise("scalar", c.scalar, v);
  visit_gpsimd_and_memories(c, v);
  visit_dma(c.dma, v);

  auto& h = c.hbm;
  // From 10 MiB (tensors are placed from 1 MiB on) to 1 PiB.
  v.param("hbm.capacity_gib", h.capacity_gib, reals(0.01, 1024 * 1024), "GiB",
          "HBM capacity per chip");
  v.param("hbm.bandwidth_gbps", h.bandwidth_gbps, kBandwidthGbps, "GB/s", "HBM bandwidth per chip");
  v.param("hbm.stacks", h.stacks, kUnits, "stacks", "HBM stacks per chip");

  auto& l = c.link;
  v.param("link.neuronlink_gbps_per_chip", l.neuronlink_gbps_per_chip, kBandwidthGbps, "GB/s",
          "NeuronLink bandwidth per chip");
  v.param("link.ports", l.ports, kUnits, "ports", "NeuronLink ports per chip");

  v.figures("published_chip", c.published_chip,
            "published per-chip peak TFLOPS by mode, checked against cores x core peak");
}

}  // namespace trnsim::arch::detail
