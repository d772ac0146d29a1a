// `trnsim numerics ...`: inspect data types and conversions from the command line.
//   trnsim numerics types
//   trnsim numerics convert --to fp8_e4m3fn 1.5 448 1000 [--rounding sr --seed 7] [--saturate]
//   trnsim numerics convert --to mxfp8 [--scale-rule trainium] 1 2 3 ...   (one MX block)
//   trnsim numerics table fp4_e2m1
//   trnsim numerics selfcheck
#include <fmt/core.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "numerics/numerics.h"

namespace trnsim::cli {
namespace {

using numerics::DType;

DType parse_type_or_throw(const std::string& text) {
  const auto type = numerics::parse_dtype(text);
  if (!type) throw CLI::ValidationError("type", "unknown data type '" + text + "'");
  return *type;
}

int hex_digits(DType type) {
  return static_cast<int>(2 * numerics::storage_bytes(numerics::unpacked_element(type)));
}

// fp32 values print with enough digits to round-trip.
std::string format_value(float v) {
  return fmt::format("{}", v);
}

struct ConvertArgs {
  std::string to = "bf16";
  std::string rounding = "rne";
  std::string scale_rule = "ocp";
  std::uint64_t seed = 0;
  bool saturate = false;
  std::vector<std::string> values;
};

void run_convert(const ConvertArgs& args) {
  const DType type = parse_type_or_throw(args.to);
  numerics::ConvertOptions options;
  if (args.rounding == "sr" || args.rounding == "stochastic") {
    options.rounding = numerics::RoundingMode::kStochastic;
  } else if (args.rounding != "rne") {
    throw CLI::ValidationError("--rounding", "expected rne or sr");
  }
  options.overflow =
      args.saturate ? numerics::OverflowMode::kSaturate : numerics::OverflowMode::kInfNan;
  options.seed = args.seed;
  std::vector<float> inputs;
  for (const std::string& text : args.values) inputs.push_back(std::stof(text));

  if (numerics::is_mx_packed(type)) {
    // The values form MX blocks of 32 (the last one may be shorter).
    const DType element = numerics::unpacked_element(type);
    numerics::MxOptions mx;
    mx.element = element;
    mx.rounding = options.rounding;
    mx.seed = options.seed;
    mx.scale_rule = args.scale_rule == "trainium" ? numerics::MxScaleRule::kTrainium
                                                  : numerics::MxScaleRule::kOcp;
    std::vector<std::uint8_t> codes(inputs.size());
    std::vector<std::uint8_t> scales((inputs.size() + 31) / 32);
    numerics::quantize_mx(inputs, codes, scales, mx);
    std::vector<float> values(inputs.size());
    numerics::dequantize_mx(element, codes, scales, values);
    for (std::size_t b = 0; b < scales.size(); ++b) {
      fmt::print("block {}: scale 0x{:02X} = {} ({} rule, {} elements)\n", b, scales[b],
                 format_value(numerics::e8m0_to_float(scales[b])), args.scale_rule,
                 numerics::name(element));
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      fmt::print("{:>14} -> code 0x{:0{}X} -> {}\n", args.values[i], codes[i], hex_digits(type),
                 format_value(values[i]));
    }
    return;
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::uint32_t code = numerics::encode(type, inputs[i], options, i);
    fmt::print("{:>14} -> {} code 0x{:0{}X} -> {}\n", args.values[i], numerics::name(type), code,
               hex_digits(type), format_value(numerics::decode(type, code)));
  }
}

void run_table(const std::string& type_text) {
  const DType type = parse_type_or_throw(type_text);
  const auto& info = numerics::info(numerics::unpacked_element(type));
  if (info.element_bits > 16) {
    throw CLI::ValidationError("type", "table lists types of at most 16 bits");
  }
  fmt::print("{}: {} codes\n", info.name, 1u << info.element_bits);
  for (std::uint32_t code = 0; code < (1u << info.element_bits); ++code) {
    fmt::print("0x{:0{}X}  {:0{}b}  {}\n", code, hex_digits(info.dtype), code, info.element_bits,
               format_value(numerics::decode(info.dtype, code)));
  }
}

void run_types() {
  for (const numerics::DTypeInfo& row : numerics::all_dtypes()) {
    fmt::print("{:<18} {} byte(s) per word, {} element(s) of {} bits{}\n", row.name,
               row.storage_bytes, row.elements_per_word, row.element_bits,
               row.is_float ? "" : ", integer");
  }
}

// One self-check line: prints the result and returns whether it passed.
bool report(bool ok, const std::string& what) {
  fmt::print("  [{}] {}\n", ok ? " ok " : "FAIL", what);
  return ok;
}

bool every_finite_code_round_trips(DType type) {
  const unsigned bits = numerics::info(type).element_bits;
  for (std::uint32_t code = 0; code < (1u << bits); ++code) {
    const float v = numerics::decode(type, code);
    if (std::isnan(v)) continue;
    if (numerics::encode(type, v) != code) return false;
  }
  return true;
}

}  // namespace

bool run_numerics_selfcheck() {
  using numerics::encode;
  fmt::print("numerics self-check\n");
  bool ok = true;
  for (DType type :
       {DType::kBFloat16, DType::kFloat16, DType::kFloat8E4M3, DType::kFloat8E4M3Ieee,
        DType::kFloat8E5M2, DType::kFloat6E3M2, DType::kFloat6E2M3, DType::kFloat4E2M1}) {
    ok &=
        report(every_finite_code_round_trips(type),
               fmt::format("every {} code decodes and re-encodes to itself", numerics::name(type)));
  }
  ok &= report(encode(DType::kFloat8E4M3, 464.0f) == 0x7E &&
                   encode(DType::kFloat8E4M3, std::nextafter(464.0f, 500.0f)) == 0x7F,
               "fp8_e4m3fn: 464 ties to 448, anything above is NaN (no Inf)");
  ok &= report(encode(DType::kFloat8E4M3Ieee, 240.0f) == 0x77 &&
                   encode(DType::kFloat8E4M3Ieee, 248.0f) == 0x78,
               "fp8_e4m3 (legacy): 240 is the largest finite, 248 ties to Inf");
  ok &= report(
      encode(DType::kFloat8E5M2, 61440.0f) == 0x7C && encode(DType::kFloat16, 65520.0f) == 0x7C00,
      "fp8_e5m2 61440 and fp16 65520 overflow to Inf under RNE");
  {
    // One outlier in a block of ones: OCP clamps it (1000 -> 896), Trainium's scale keeps it.
    std::vector<float> block(32, 1.0f);
    block[7] = 1000.0f;
    std::vector<std::uint8_t> codes(32);
    numerics::MxOptions mx;
    const std::uint8_t ocp_scale = numerics::quantize_mx_block(block, codes, mx);
    const bool ocp_ok = ocp_scale == 128 && codes[7] == 0x7E && codes[0] == 0x30;
    mx.scale_rule = numerics::MxScaleRule::kTrainium;
    const std::uint8_t trn_scale = numerics::quantize_mx_block(block, codes, mx);
    const bool trn_ok = trn_scale == 129 && codes[7] == 0x78 && codes[0] == 0x28;
    ok &= report(ocp_ok && trn_ok,
                 "MXFP8 golden block: OCP scale 2^1 clamps 1000 to 896; Trainium 2^2 gives 1024");
  }
  {
    // Stochastic rounding of 1 + 0.25 ulp to BF16: about a quarter of the samples round up.
    numerics::ConvertOptions sr;
    sr.rounding = numerics::RoundingMode::kStochastic;
    sr.seed = 1;
    const std::vector<float> in(1 << 16, 1.0f + 0.25f * 0.0078125f);
    std::vector<std::uint16_t> out(in.size());
    numerics::encode_array(DType::kBFloat16, in, out, sr);
    std::size_t ups = 0;
    for (std::uint16_t c : out) ups += c == 0x3F81;
    const double fraction = static_cast<double>(ups) / static_cast<double>(in.size());
    ok &= report(std::fabs(fraction - 0.25) < 0.01,
                 fmt::format("stochastic BF16 rounding of 1 + ulp/4 rounds up {:.4f} of the time",
                             fraction));
  }
  fmt::print("numerics self-check: {}\n", ok ? "all passed" : "FAILED");
  return ok;
}

void register_numerics_command(CLI::App& app) {
  auto* numerics_cmd = app.add_subcommand("numerics", "Data types and conversions");
  numerics_cmd->require_subcommand(1);

  numerics_cmd->add_subcommand("types", "List the data types")->callback(run_types);

  auto args = std::make_shared<ConvertArgs>();
  auto* convert = numerics_cmd->add_subcommand(
      "convert", "Convert fp32 values and print code and value (x4 types: as MX blocks)");
  convert->add_option("--to", args->to, "Target type (bf16, fp8_e4m3fn, fp4_e2m1, mxfp8, ...)")
      ->required();
  convert->add_option("--rounding", args->rounding, "rne (default) or sr");
  convert->add_option("--seed", args->seed, "Seed for stochastic rounding");
  convert->add_flag("--saturate", args->saturate, "Saturate overflow instead of Inf/NaN");
  convert->add_option("--scale-rule", args->scale_rule, "MX scale rule: ocp or trainium");
  convert->add_option("values", args->values, "fp32 values")->required();
  convert->callback([args] { run_convert(*args); });

  auto type_name = std::make_shared<std::string>();
  auto* table = numerics_cmd->add_subcommand("table", "List every code of a type (<= 16 bits)");
  table->add_option("type", *type_name, "Data type")->required();
  table->callback([type_name] { run_table(*type_name); });

  numerics_cmd->add_subcommand("selfcheck", "Quick check of conversions and MX blocks")
      ->callback([] {
        if (!run_numerics_selfcheck()) throw CLI::RuntimeError(1);
      });
}

}  // namespace trnsim::cli
