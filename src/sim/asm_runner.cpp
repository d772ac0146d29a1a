#include "sim/asm_runner.h"

#include <fmt/core.h>

#include <charconv>
#include <sstream>

#include "isa/asm.h"
#include "numerics/numerics.h"
#include "util/format_bytes.h"
#include "util/read_file.h"

namespace trnsim::sim {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::uint64_t parse_number(std::string_view text, std::string_view spec, const char* what) {
  text = trim(text);
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    base = 16;
  }
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw SimError(fmt::format("hbm tensor '{}': {} '{}' is not a number", spec, what, text));
  return value;
}

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

std::uint64_t HbmTensor::elements() const {
  std::uint64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::uint64_t HbmTensor::bytes() const {
  return elements() * numerics::storage_bytes(dtype);
}

std::string HbmTensor::to_string() const {
  std::string dims;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) dims.push_back(',');
    dims.append(std::to_string(shape[i]));
  }
  return fmt::format("{}@{:#x}:{}[{}]", name, address, numerics::name(dtype), dims);
}

HbmTensor parse_hbm_tensor(std::string_view spec) {
  spec = trim(spec);
  const auto at = spec.find('@'), colon = spec.find(':'), open = spec.find('[');
  if (at == std::string_view::npos || colon == std::string_view::npos ||
      open == std::string_view::npos || spec.back() != ']' || !(at < colon && colon < open))
    throw SimError(fmt::format(
        "hbm tensor '{}': expected NAME@ADDRESS:DTYPE[D0,D1,...], e.g. a@0x0:bfloat16[256,256]",
        spec));
  HbmTensor t;
  t.name = std::string(trim(spec.substr(0, at)));
  if (t.name.empty()) throw SimError(fmt::format("hbm tensor '{}': empty name", spec));
  t.address = parse_number(spec.substr(at + 1, colon - at - 1), spec, "address");
  const std::string_view dtype_text = trim(spec.substr(colon + 1, open - colon - 1));
  const auto dtype = numerics::parse_dtype(dtype_text);
  if (!dtype) throw SimError(fmt::format("hbm tensor '{}': unknown dtype '{}'", spec, dtype_text));
  t.dtype = *dtype;
  std::string_view dims = spec.substr(open + 1, spec.size() - open - 2);
  while (!dims.empty()) {
    const auto comma = dims.find(',');
    t.shape.push_back(parse_number(dims.substr(0, comma), spec, "dimension"));
    if (t.shape.back() == 0) throw SimError(fmt::format("hbm tensor '{}': zero dimension", spec));
    dims = comma == std::string_view::npos ? std::string_view{} : dims.substr(comma + 1);
  }
  if (t.shape.empty()) throw SimError(fmt::format("hbm tensor '{}': no dimensions", spec));
  // The size and the end address must not wrap: a wrapped size would allocate a few bytes
  // for a huge tensor (the device's capacity check does the rest).
  std::uint64_t bytes = numerics::storage_bytes(t.dtype);
  for (const std::uint64_t d : t.shape)
    if (__builtin_mul_overflow(bytes, d, &bytes) || t.address + bytes < t.address)
      throw SimError(
          fmt::format("hbm tensor '{}': its size does not fit in 64-bit addresses", spec));
  return t;
}

std::vector<HbmTensor> find_hbm_directives(std::string_view text, const std::string& file) {
  std::vector<HbmTensor> tensors;
  std::istringstream lines{std::string(text)};
  std::string line;
  std::uint32_t line_number = 0;
  while (std::getline(lines, line)) {
    ++line_number;
    std::string_view rest = trim(line);
    if (rest.starts_with("//")) {
      rest.remove_prefix(2);
    } else if (rest.starts_with('#') || rest.starts_with(';')) {
      rest.remove_prefix(1);
    } else {
      continue;
    }
    rest = trim(rest);
    if (!rest.starts_with("@hbm ") && !rest.starts_with("@hbm\t")) continue;
    try {
      tensors.push_back(parse_hbm_tensor(rest.substr(5)));
    } catch (const SimError& e) {
      util::Diagnostic located = e.diagnostics().front();
      const auto column = static_cast<std::uint32_t>(rest.data() - line.data()) + 1;
      located.where = {file, line_number, column};
      throw SimError(std::move(located));
    }
  }
  return tensors;
}

AsmRunOutcome run_asm(const AsmRunRequest& request) {
  AsmRunOutcome outcome;
  std::string text = request.asm_text;
  const std::string file = request.asm_path.empty() ? "<asm>" : request.asm_path;
  if (text.empty()) text = read_file(request.asm_path, isa::kMaxProgramFileBytes, "assembly file");
  outcome.program = isa::parse_program(text, file);
  outcome.tensors = find_hbm_directives(text, file);
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
      throw SimError(fmt::format("input for '{}', but no hbm tensor has that name", init.name));
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
  // declared byte host memory (gigabytes for a large @hbm declaration).
  if (request.options.functional)
    for (const HbmTensor& t : outcome.tensors)
      outcome.contents[t.name] = device.read(t.address, t.bytes());
  return outcome;
}

}  // namespace trnsim::sim
