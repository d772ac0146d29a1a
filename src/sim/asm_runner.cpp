#include "sim/asm_runner.h"

#include <fmt/core.h>

#include "isa/asm.h"
#include "numerics/numerics.h"
#include "util/format_bytes.h"
#include "util/read_file.h"

namespace trnsim::sim {

namespace {

std::string read_file(const std::string& path, std::uint64_t max_bytes, std::string_view what) {
  try {
    return util::read_file(path, max_bytes, what);
  } catch (const util::Error& e) {
    throw SimError(e.diagnostics().front());
  }
}

// Deterministic values in [-1, 1), encoded RNE into the tensor's dtype.
std::vector<std::uint8_t> random_contents(const HbmTensor& t, std::uint64_t seed) {
  const std::uint64_t lanes = numerics::is_mx_packed(t.dtype) ? 4 : 1;
  std::vector<float> values(t.elements() * lanes);
  std::uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (float& v : values) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;  // 64-bit LCG (Knuth)
    v = static_cast<float>(static_cast<double>(state >> 40) * 0x1.0p-23 - 1.0);
  }
  std::vector<std::uint8_t> bytes(t.bytes());
  numerics::encode_bytes(t.dtype, values, std::as_writable_bytes(std::span(bytes)));
  return bytes;
}

}  // namespace

AsmRunOutcome run_asm(const AsmRunRequest& request) {
  AsmRunOutcome outcome;
  std::string text = request.asm_text;
  const std::string file = request.asm_path.empty() ? "<asm>" : request.asm_path;
  if (text.empty()) text = read_file(request.asm_path, isa::kMaxProgramFileBytes, "assembly file");
  outcome.program = isa::parse_program(text, file);
  outcome.tensors = outcome.program.hbm;
  outcome.tensors.insert(outcome.tensors.end(), request.extra_tensors.begin(),
                         request.extra_tensors.end());

  Device device(arch::load(request.chip));
  std::map<std::string, const HbmTensor*> by_name;
  for (const HbmTensor& t : outcome.tensors) {
    if (!by_name.emplace(t.name, &t).second)
      throw SimError(fmt::format("hbm tensor '{}' is declared twice", t.name));
    try {
      device.allocate_at(t.address, t.bytes());
    } catch (const SimError& e) {
      throw SimError(fmt::format("hbm tensor {} ({}): {}", t.to_string(),
                                 util::format_bytes(t.bytes()), e.diagnostics().front().message));
    }
  }
  for (const TensorInit& init : request.inits) {
    auto it = by_name.find(init.name);
    if (it == by_name.end())
      throw SimError(fmt::format(
          "input for '{}', but no hbm tensor has that name (the program declares them with "
          "'.hbm NAME@ADDRESS:DTYPE[D0,D1,...]' lines; --hbm adds more)",
          init.name));
    const HbmTensor& t = *it->second;
    std::vector<std::uint8_t> bytes;
    switch (init.kind) {
      case TensorInit::Kind::kFile: {
        const std::string data =
            read_file(init.path, t.bytes(), fmt::format("input for tensor '{}'", t.name));
        bytes.assign(data.begin(), data.end());
        break;
      }
      case TensorInit::Kind::kBytes:
        bytes = init.bytes;
        break;
      case TensorInit::Kind::kRandom:
        bytes = random_contents(t, init.seed);
        break;
    }
    if (bytes.size() != t.bytes())
      throw SimError(fmt::format("input for {} has {} bytes; the tensor has {}", t.to_string(),
                                 bytes.size(), t.bytes()));
    device.write(t.address, bytes);
  }

  if (request.timed) {
    TimingModel model(device.chip(), request.timing);
    RunOptions options = request.options;
    options.cost_model = &model;
    outcome.result = run(device, outcome.program, options);
    outcome.timing = model.report(outcome.program, outcome.result);
  } else {
    outcome.result = run(device, outcome.program, request.options);
  }
  // A timing-only run computes no data: reading its tensors back would only give every
  // declared byte host memory (gigabytes for a large .hbm declaration).
  if (request.options.functional)
    for (const HbmTensor& t : outcome.tensors)
      outcome.contents[t.name] = device.read(t.address, t.bytes());
  return outcome;
}

}  // namespace trnsim::sim
