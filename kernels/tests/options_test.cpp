// Kernel tuning options: parsing and checking of values, resolution against a kernel's
// declarations, the registry's checks of declarations, and tuned library problems (correct,
// and different from the defaults).
#include "kernels/options.h"

#include <fmt/core.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "arch/arch.h"
#include "kernel/kernel.h"
#include "kernels/registry.h"
#include "kernels/runner.h"
#include "kernels/tests/kernel_test_util.h"

namespace trnsim::kernels {
namespace {

using numerics::DType;
using ::testing::HasSubstr;
using Pairs = std::vector<std::pair<std::string, std::string>>;

// The message of the std::invalid_argument `f` throws ("" when it throws nothing).
template <class F>
std::string invalid(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

const std::vector<KernelOption>& sample_options() {
  static const std::vector<KernelOption> options = {
      KernelOption::integer("block_m", 4, 1, 8, "rows"),
      KernelOption::integer("kv_block", 512, 128, 2048, "keys", 128),
      KernelOption::number("eps", 1e-6, 0, 1, "epsilon"),
      KernelOption::flag("hoist", true, "hoist"),
      KernelOption::choice("out_dtype", "bfloat16", {"bfloat16", "float32"}, "output"),
  };
  return options;
}

TEST(KernelOptions, TypeTexts) {
  const auto& o = sample_options();
  EXPECT_EQ(o[0].type_text(), "int 1..8");
  EXPECT_EQ(o[1].type_text(), "int 128..2048, a multiple of 128");
  EXPECT_EQ(o[2].type_text(), "number 0..1");
  EXPECT_EQ(o[3].type_text(), "on|off");
  EXPECT_EQ(o[4].type_text(), "bfloat16|float32");
  EXPECT_EQ(option_list(o).substr(0, 60),
            "block_m (int 1..8, default 4), kv_block (int 128..2048, a mu");
  EXPECT_EQ(option_list({}), "none");
}

TEST(KernelOptions, SplitSettings) {
  EXPECT_EQ(split_settings("block_m=2,block_n=4", "--set"),
            (Pairs{{"block_m", "2"}, {"block_n", "4"}}));
  EXPECT_EQ(split_settings(" a = 1 , b=x ", "--set"), (Pairs{{"a", "1"}, {"b", "x"}}));
  EXPECT_EQ(split_settings("a==1", "--set"), (Pairs{{"a", "=1"}}));
  EXPECT_THAT(invalid([] { split_settings("", "--set"); }), HasSubstr("--set is empty"));
  EXPECT_THAT(invalid([] { split_settings("block_n", "--set"); }),
              HasSubstr("'block_n' is not key=value"));
  EXPECT_THAT(invalid([] { split_settings("a=1,", "--set"); }), HasSubstr("'' is not key=value"));
  EXPECT_THAT(invalid([] { split_settings("=1", "--set"); }), HasSubstr("'=1' has no key"));
  EXPECT_THAT(invalid([] { split_settings("a=", "--set"); }), HasSubstr("a has no value"));
}

TEST(KernelOptions, Integers) {
  const KernelOption& m = sample_options()[0];
  const KernelOption& kv = sample_options()[1];
  EXPECT_EQ(parse_option_value(m, "4"), OptionValue(std::int64_t{4}));
  EXPECT_EQ(parse_option_value(m, "+8"), OptionValue(std::int64_t{8}));
  EXPECT_EQ(parse_option_value(kv, "256"), OptionValue(std::int64_t{256}));
  EXPECT_EQ(invalid([&] { parse_option_value(m, "four"); }),
            "block_m=four: expected an integer (block_m is int 1..8)");
  EXPECT_THAT(invalid([&] { parse_option_value(m, "4.0"); }), HasSubstr("expected an integer"));
  EXPECT_THAT(invalid([&] { parse_option_value(m, "0x4"); }), HasSubstr("expected an integer"));
  EXPECT_THAT(invalid([&] { parse_option_value(m, "99999999999999999999"); }),
              HasSubstr("out of range"));
  EXPECT_EQ(invalid([&] { parse_option_value(m, "9"); }),
            "block_m=9: out of range (block_m is int 1..8)");
  EXPECT_THAT(invalid([&] { parse_option_value(m, "-1"); }), HasSubstr("out of range"));
  EXPECT_EQ(invalid([&] { parse_option_value(kv, "300"); }),
            "kv_block=300: not a multiple of 128 (kv_block is int 128..2048, a multiple of 128)");
  EXPECT_THAT(invalid([&] { parse_option_value(kv, "4096"); }), HasSubstr("out of range"));
}

TEST(KernelOptions, NumbersSwitchesAndChoices) {
  const auto& o = sample_options();
  EXPECT_EQ(parse_option_value(o[2], "1e-5"), OptionValue(1e-5));
  EXPECT_EQ(parse_option_value(o[2], "0"), OptionValue(0.0));
  EXPECT_THAT(invalid([&] { parse_option_value(o[2], "small"); }),
              HasSubstr("eps=small: expected a finite number (eps is number 0..1)"));
  EXPECT_THAT(invalid([&] { parse_option_value(o[2], "nan"); }), HasSubstr("finite"));
  EXPECT_THAT(invalid([&] { parse_option_value(o[2], "inf"); }), HasSubstr("finite"));
  EXPECT_THAT(invalid([&] { parse_option_value(o[2], "2"); }), HasSubstr("eps=2: out of range"));
  for (const char* on : {"on", "true", "yes", "1"})
    EXPECT_EQ(parse_option_value(o[3], on), OptionValue(true));
  for (const char* off : {"off", "false", "no", "0"})
    EXPECT_EQ(parse_option_value(o[3], off), OptionValue(false));
  EXPECT_EQ(invalid([&] { parse_option_value(o[3], "maybe"); }),
            "hoist=maybe: expected on or off (hoist is on|off)");
  EXPECT_EQ(parse_option_value(o[4], "float32"), OptionValue(std::string("float32")));
  EXPECT_EQ(invalid([&] { parse_option_value(o[4], "fp8"); }),
            "out_dtype=fp8: expected one of bfloat16, float32 (out_dtype is bfloat16|float32)");
}

TEST(KernelOptions, TypedValuesFromCode) {
  const auto& o = sample_options();
  // An integer for a number option is converted; other types are refused with both named.
  EXPECT_EQ(check_option_value(o[2], std::int64_t{1}), OptionValue(1.0));
  EXPECT_EQ(invalid([&] { check_option_value(o[0], std::string("4")); }),
            "block_m takes an integer (int 1..8), not the word '4'");
  EXPECT_THAT(invalid([&] { check_option_value(o[0], 4.0); }), HasSubstr("not the number 4"));
  EXPECT_THAT(invalid([&] { check_option_value(o[3], std::int64_t{1}); }),
              HasSubstr("hoist takes on or off (on|off), not the integer 1"));
  EXPECT_THAT(invalid([&] { check_option_value(o[4], true); }), HasSubstr("not the switch on"));
}

TEST(KernelOptions, ResolveFillsDefaultsInDeclarationOrder) {
  const auto& o = sample_options();
  const OptionValues v = resolve_options("k", o, {{"out_dtype", "float32"}, {"block_m", 2}});
  ASSERT_EQ(v.entries().size(), o.size());
  EXPECT_EQ(v.entries()[0].first, "block_m");
  EXPECT_EQ(v.integer("block_m"), 2);
  EXPECT_EQ(v.integer("kv_block"), 512);
  EXPECT_DOUBLE_EQ(v.number("eps"), 1e-6);
  EXPECT_TRUE(v.flag("hoist"));
  EXPECT_EQ(v.choice("out_dtype"), "float32");
  EXPECT_EQ(changed_options_text(o, v), "block_m=2, out_dtype=float32");
  EXPECT_EQ(changed_options_text(o, v, true),
            "block_m=2 (default 4), out_dtype=float32 (default bfloat16)");
  EXPECT_EQ(changed_options_text(o, resolve_options("k", o, {{"block_m", 4}})), "");
  // Reading an option that is not there, or as another type, is a programming error.
  EXPECT_THROW(v.integer("block_n"), std::logic_error);
  EXPECT_THROW(v.flag("block_m"), std::logic_error);
  EXPECT_THROW(OptionValues{}.integer("block_m"), std::logic_error);
}

TEST(KernelOptions, UnknownNamesListTheValidOnes) {
  const auto& o = sample_options();
  const std::string e = invalid([&] { resolve_options("matmul", o, {{"block_k", 2}}); });
  EXPECT_THAT(e,
              HasSubstr("matmul has no option 'block_k' (did you mean 'block_m'?); its options are "
                        "block_m (int 1..8, default 4), kv_block (int 128..2048, a multiple of "
                        "128, default 512), eps (number 0..1, default 1e-06), hoist (on|off, "
                        "default on), out_dtype (bfloat16|float32, default bfloat16)"));
  EXPECT_THAT(invalid([&] {
                resolve_options("matmul", o, {{"colour", 2}});
              }),
              ::testing::Not(HasSubstr("did you mean")));
  EXPECT_EQ(invalid([] {
              resolve_options("tiled", {}, {{"block_n", 2}});
            }),
            "tiled has no option 'block_n'; it has no tuning options");
  EXPECT_THAT(invalid([&] {
                resolve_options("k", o, {{"block_m", 12}});
              }),
              HasSubstr("block_m=12: out of range"));
}

TEST(KernelOptions, ParseSettingsTypesAndRejectsDuplicates) {
  const auto& o = sample_options();
  const OptionValues v = parse_option_settings("k", o, Pairs{{"hoist", "off"}, {"eps", "0.5"}});
  EXPECT_EQ(v.entries().size(), 2u);  // only what was given
  EXPECT_FALSE(v.flag("hoist"));
  EXPECT_DOUBLE_EQ(v.number("eps"), 0.5);
  EXPECT_EQ(invalid([&] {
              parse_option_settings("k", o, Pairs{{"block_m", "1"}, {"block_m", "2"}});
            }),
            "option block_m is given twice");
  EXPECT_THAT(invalid([&] {
                parse_option_settings("k", o, Pairs{{"blockm", "1"}});
              }),
              HasSubstr("k has no option 'blockm' (did you mean 'block_m'?)"));
}

TEST(KernelOptions, RegistrationChecksDeclarations) {
  const auto info = [](std::vector<KernelOption> options) {
    return KernelInfo{
        "options_test_kernel",
        "",
        "N",
        {1},
        DType::kFloat32,
        {DType::kFloat32},
        [](const std::vector<std::int64_t>&, DType, const arch::ChipConfig&) { return Problem{}; },
        std::move(options)};
  };
  const auto logic = [](const KernelInfo& k) {
    try {
      register_kernel(k);
    } catch (const std::logic_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_THAT(logic(info({KernelOption::integer("shape", 1, 1, 2, "")})),
              HasSubstr("is a key of trnsim profile"));
  EXPECT_THAT(logic(info({KernelOption::integer("Block", 1, 1, 2, "")})), HasSubstr("lower case"));
  EXPECT_THAT(
      logic(info({KernelOption::integer("a", 1, 1, 2, ""), KernelOption::flag("a", true, "")})),
      HasSubstr("declared twice"));
  EXPECT_THAT(logic(info({KernelOption::integer("a", 3, 1, 2, "")})),
              HasSubstr("has a default it rejects"));
  EXPECT_THAT(logic(info({KernelOption::choice("a", "x", {}, "")})), HasSubstr("has no choices"));
  EXPECT_EQ(find_kernel("options_test_kernel"), nullptr);  // none of them was registered
}

TEST(KernelOptions, LibraryDeclarationsAreWellFormed) {
  // Every registered option has help and its default passes its own check (register_kernel
  // enforces the latter); the kernels with knobs declare them.
  for (const auto& k : library())
    for (const auto& o : k.options) {
      EXPECT_FALSE(o.help.empty()) << k.name << " " << o.name;
      EXPECT_NO_THROW(check_option_value(o, o.default_value)) << k.name << " " << o.name;
    }
  const auto names = [](const char* kernel) {
    std::vector<std::string> out;
    for (const auto& o : find_kernel(kernel)->options) out.push_back(o.name);
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names("matmul"), (V{"block_m", "block_n"}));
  EXPECT_EQ(names("attention"), (V{"kv_block", "dma_transpose_period"}));
  EXPECT_EQ(names("attention_pe"), (V{"kv_block"}));
  EXPECT_EQ(names("matmul_mx"),
            (V{"block_m", "block_n", "hoist_a_scales", "a_band_budget_bytes", "out_dtype"}));
  EXPECT_EQ(names("mlp"), (V{"token_block", "down_cols"}));
  EXPECT_EQ(names("softmax"), (V{"tile_elements"}));
  EXPECT_EQ(names("rope"), (V{"tile_elements"}));
  EXPECT_EQ(names("rmsnorm"), (V{"eps"}));
  EXPECT_TRUE(names("tutorial_matmul_tiled").empty());
}

// ---- tuned library problems ------------------------------------------------------------

TEST(KernelOptions, MakeLabelsTheChangedOptions) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  const KernelInfo& mm = *find_kernel("matmul");
  const Problem p = mm.make({256, 512, 256}, DType::kBFloat16, chip, {{"block_n", 1}});
  EXPECT_EQ(p.label, "matmul 256x512x256 bfloat16 [block_n=1]");
  EXPECT_EQ(p.options, "block_n=1 (default 2)");
  const Problem d = mm.make({256, 512, 256}, DType::kBFloat16, chip, {{"block_n", 2}});
  EXPECT_EQ(d.label, "matmul 256x512x256 bfloat16");  // a default set explicitly
  EXPECT_EQ(d.options, "");
  EXPECT_THAT(invalid([&] {
                mm.make({256, 512, 256}, DType::kBFloat16, chip, {{"block_k", 1}});
              }),
              HasSubstr("matmul has no option 'block_k'"));
  EXPECT_EQ(
      invalid([&] {
        mm.make({256, 512, 256}, DType::kBFloat16, chip, {{"block_m", 8}, {"block_n", 2}});
      }),
      "matmul: block_m x block_n = 8 x 2 = 16 accumulators need one PSUM bank each; trn3 has 8: "
      "lower block_m or block_n");
}

TEST(KernelOptions, TunedMatmulIsCorrectAndDifferent) {
  const ProblemReport base = run_kernel("matmul", "trn3", {512, 1024, 384}, DType::kBFloat16);
  const ProblemReport tuned = run_kernel("matmul", "trn3", {512, 1024, 384}, DType::kBFloat16,
                                         {{"block_m", 1}, {"block_n", 1}});
  expect_kernel_correct(base);
  expect_kernel_correct(tuned);
  // 1 x 1 blocks reload a_t for every 512 columns and b for every 128 rows.
  EXPECT_GT(tuned.instructions, base.instructions);
  EXPECT_GT(tuned.simulated_ns, base.simulated_ns);
}

TEST(KernelOptions, EveryKnobKeepsItsKernelCorrect) {
  struct Case {
    const char* kernel;
    std::vector<std::int64_t> shape;
    DType dtype;
    OptionValues set;
  };
  const std::vector<Case> cases = {
      {"attention", {640, 64}, DType::kBFloat16, {{"kv_block", 256}, {"dma_transpose_period", 1}}},
      {"attention_causal",
       {520, 128},
       DType::kBFloat16,
       {{"kv_block", 128}, {"dma_transpose_period", 0}}},
      {"attention_pe", {640, 64}, DType::kBFloat16, {{"kv_block", 1024}}},
      {"matmul_mx",
       {256, 640, 1024},
       DType::kFloat8E4M3x4,
       {{"block_m", 1},
        {"block_n", 3},
        {"hoist_a_scales", false},
        {"a_band_budget_bytes", 0},
        {"out_dtype", "float32"}}},
      {"mlp", {300, 256, 384}, DType::kBFloat16, {{"token_block", 96}, {"down_cols", 200}}},
      {"softmax", {1000, 300}, DType::kFloat32, {{"tile_elements", 1200}}},
      {"rope", {1100, 64}, DType::kBFloat16, {{"tile_elements", 64}}},
      {"rmsnorm", {256, 512}, DType::kFloat32, {{"eps", 0.25}}},
      {"layernorm", {256, 512}, DType::kBFloat16, {{"eps", 1e-2}}},
  };
  for (const Case& c : cases) {
    const ProblemReport base = run_kernel(c.kernel, "trn3", c.shape, c.dtype);
    const ProblemReport tuned = run_kernel(c.kernel, "trn3", c.shape, c.dtype, c.set);
    expect_kernel_correct(base);
    expect_kernel_correct(tuned);
    EXPECT_NE(tuned.label, base.label);
    // eps changes the values, not the code; every other knob changes the program.
    if (std::string(c.kernel).ends_with("norm")) continue;
    EXPECT_TRUE(tuned.instructions != base.instructions || tuned.simulated_ns != base.simulated_ns)
        << tuned.label << ": " << tuned.instructions << " instructions, " << tuned.simulated_ns
        << " ns";
  }
}

TEST(KernelOptions, CompilerErrorsNameTheChangedOptions) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  const Problem p =
      find_kernel("softmax")->make({2048, 2048}, DType::kFloat32, chip, {{"tile_elements", 32768}});
  try {
    build_problem(p, chip);
    FAIL() << "a 32768-element fp32 tile (x and exp, 256 KiB per partition) should not fit SBUF";
  } catch (const kernel::KernelError& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("with the kernel options tile_elements=32768 (default 4096): SBUF tile"));
    EXPECT_THAT(e.what(), HasSubstr("does not fit"));
    EXPECT_THAT(e.where().file, HasSubstr("softmax.cpp"));
  }
}

// ---- the example of docs/kernel-api.md, section 13 ("Library kernels and their tuning options")

struct ScaleOptions {
  std::int64_t tile_cols = 2048;  // columns per tile
  bool on_scalar = false;         // multiply on ScalarE instead of leaving the engine open
};

std::vector<Tensor> scale(std::span<const Tensor> in, const ScaleOptions& o) {
  const Tensor& x = in[0];
  Tensor y = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "y");
  const std::int64_t p = nl::tile_size::pmax();
  for (std::int64_t r0 = 0; r0 < x.dim(0); r0 += p)
    for (std::int64_t c0 = 0; c0 < x.dim(1); c0 += o.tile_cols) {
      const std::int64_t n = std::min(p, x.dim(0) - r0), w = std::min(o.tile_cols, x.dim(1) - c0);
      Tensor t = nl::load(x(nl::ds(r0, n), nl::ds(c0, w)));
      nisa::TensorScalarOptions ts;
      if (o.on_scalar) ts.common.engine = isa::Engine::kScalar;
      nisa::tensor_scalar(t, t, isa::AluOp::kMultiply, 2.0f, ts);
      nl::store(y(nl::ds(r0, n), nl::ds(c0, w)), t);
    }
  return {y};
}

Problem make_scale(const std::vector<std::int64_t>& shape, DType dtype, const arch::ChipConfig&,
                   const OptionValues& options) {
  require_dims(shape, 2, "RxC");
  const ScaleOptions o{.tile_cols = options.integer("tile_cols"),
                       .on_scalar = options.flag("on_scalar")};
  Problem p;
  p.label = fmt::format("scale {}x{} {}", shape[0], shape[1], numerics::name(dtype));
  p.fn = [o](std::span<const Tensor> in) { return scale(in, o); };
  p.inputs.push_back(runtime::random_tensor("x", dtype, {shape[0], shape[1]}, 1));
  p.reference = [](const std::vector<std::vector<float>>& in, std::size_t,
                   std::span<const std::int64_t> idx) {
    std::vector<double> r;
    for (std::int64_t i : idx) r.push_back(2.0 * in[0][static_cast<std::size_t>(i)]);
    return r;
  };
  p.tolerance = {0, 0, "exact: a multiply by 2"};
  return p;
}

TEST(KernelOptions, KernelApiDocExample) {
  // Not registered (the library stays as shipped): make() works on any KernelInfo.
  const KernelInfo info{"scale",
                        "y = 2 x over x [R, C]",
                        "RxC",
                        {1024, 4096},
                        DType::kFloat32,
                        {DType::kFloat32},
                        make_scale,
                        {KernelOption::integer("tile_cols", 2048, 1, 65535, "columns per tile"),
                         KernelOption::flag("on_scalar", false, "run the multiply on ScalarE")}};
  const arch::ChipConfig chip = arch::load_preset("trn3");
  const ProblemReport base = run_problem(info.make({256, 1024}, DType::kFloat32, chip), chip);
  const Problem tuned_problem =
      info.make({256, 1024}, DType::kFloat32, chip, {{"tile_cols", 512}, {"on_scalar", true}});
  EXPECT_EQ(tuned_problem.label, "scale 256x1024 float32 [tile_cols=512, on_scalar=on]");
  const ProblemReport tuned = run_problem(tuned_problem, chip);
  expect_kernel_correct(base);
  expect_kernel_correct(tuned);
  EXPECT_EQ(base.instructions, 2u * 3u);   // 2 row tiles x (load, multiply, store)
  EXPECT_EQ(tuned.instructions, 4u * 3u);  // 2 row x 2 column tiles
  EXPECT_THAT(invalid([&] {
                info.make({256, 1024}, DType::kFloat32, chip, {{"tile_cols", 0}});
              }),
              HasSubstr("tile_cols=0: out of range (tile_cols is int 1..65535)"));
}

}  // namespace
}  // namespace trnsim::kernels
