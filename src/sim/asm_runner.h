// Running an assembly file on a fresh device: what `trnsim run-asm` does, as a library call
// so tests exercise exactly the CLI's code path.
//
// HBM tensors are declared by name, address, dtype and shape, either in the assembly file
// by directives or by the caller:
//     .hbm a@0x0:bfloat16[256,256]
//     .hbm out@0x40000:float32[256,256]
// Instructions then address them by absolute HBM byte address (the `offset` of an hbm
// operand). Each tensor becomes one allocation; contents come from a file, host bytes or a
// seeded random fill, or stay uninitialised (reading them is then an error).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "isa/isa.h"
#include "sim/sim.h"
#include "sim/timing_model.h"

namespace trnsim::sim {

// The HBM tensors of an assembly program: its .hbm lines (isa::HbmTensor) and any the
// caller adds.
using isa::HbmTensor;

struct TensorInit {
  enum class Kind : std::uint8_t { kFile, kBytes, kRandom };
  std::string name;
  Kind kind = Kind::kBytes;
  std::string path;                 // kFile: raw little-endian storage words
  std::vector<std::uint8_t> bytes;  // kBytes
  std::uint64_t seed = 0;           // kRandom: values uniform in [-1, 1), rounded RNE
};

struct AsmRunRequest {
  std::string asm_path;       // read from this file ...
  std::string asm_text;       // ... unless the text is given directly (then asm_path names it)
  std::string chip = "trn3";  // preset name or JSON file
  std::vector<HbmTensor> extra_tensors;  // in addition to the file's .hbm lines
  std::vector<TensorInit> inits;
  RunOptions options;  // options.cost_model is replaced by the timing model when `timed`
  bool timed = false;  // time the run with sim::TimingModel (docs/timing-model.md)
  TimingOptions timing;
};

struct AsmRunOutcome {
  isa::Program program;
  std::vector<HbmTensor> tensors;
  RunResult result;
  // Every tensor after the run; empty in timing-only runs (options.functional false).
  std::map<std::string, std::vector<std::uint8_t>> contents;
  std::optional<TimingReport> timing;  // when the request was timed
};

// Parses, allocates and fills the tensors, runs, and reads every tensor back. Throws
// isa::AsmError for syntax errors and SimError for everything the simulator rejects.
AsmRunOutcome run_asm(const AsmRunRequest& request);

}  // namespace trnsim::sim
