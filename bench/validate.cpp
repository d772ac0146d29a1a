// Fidelity of the timing model against published hardware measurements: runs each case
// with the same kernel and shape the source measured, in timing-only mode on the matching
// preset, and prints predicted vs published with the error (docs/validation.md holds the
// table of the latest run, the sources and why the misses miss).
//
//   ./build/bench/validate            all cases
//   ./build/bench/validate --quick    skip the four full-size tutorial matmuls
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "arch/arch.h"
#include "kernel/kernel.h"
#include "kernels/registry.h"
#include "kernels/runner.h"
#include "runtime/runtime.h"

namespace {

using namespace trnsim;
using kernel::Tensor;
using numerics::DType;

struct Case {
  std::string name;
  std::string group;   // the published kernel (cases of one kernel at several sizes share it)
  std::string source;  // where the published figure is
  std::string chip;
  double published = 0;  // in `unit`
  std::string unit;
  double predicted = 0;  // kernel order on every engine (what the hardware compiler issued)
  double scheduled = 0;  // trnsim's list scheduler (the default of trnsim run)
};

double error_percent(double predicted, double published) {
  return 100.0 * (predicted - published) / published;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// The published pages, at the commit of aws-neuron/aws-neuron-sdk they were read from (the
// tutorial tables were dropped from later releases of the docs).
constexpr const char* kMatmulTutorial =
    "https://github.com/aws-neuron/aws-neuron-sdk/blob/2086a70af5c17f5d11e407e9c1df0afb8fb5965c/"
    "general/nki/tutorials/matrix_multiplication.rst";
constexpr const char* kMambaTutorial =
    "https://github.com/aws-neuron/aws-neuron-sdk/blob/0d353195f93bb4c15e7632fc7fc0e216e093910f/"
    "general/nki/tutorials/fused_mamba.rst";
constexpr const char* kDmaOverview =
    "https://github.com/aws-neuron/aws-neuron-sdk/blob/4373facfdc7a61e7c3a9b115c623996ccbe5a7bd/"
    "nki/get-started/about/nki-dma-overview.rst";
constexpr const char* kKernelOptimization =
    "https://github.com/aws-neuron/aws-neuron-sdk/blob/4373facfdc7a61e7c3a9b115c623996ccbe5a7bd/"
    "nki/guides/tutorials/kernel-optimization.rst";
constexpr const char* kPerfGuide =
    "https://github.com/aws-neuron/aws-neuron-sdk/blob/2086a70af5c17f5d11e407e9c1df0afb8fb5965c/"
    "general/nki/nki_perf_guide.rst";

// A library kernel's run in timing-only mode (no hazard check), in kernel order on every
// engine or list-scheduled.
kernels::ProblemReport time_library_kernel(const std::string& kernel,
                                           const std::vector<std::int64_t>& shape, DType dtype,
                                           const arch::ChipConfig& chip, bool schedule) {
  const kernels::KernelInfo* info = kernels::find_kernel(kernel);
  if (info == nullptr) throw std::runtime_error("missing kernel " + kernel);
  kernels::RunProblemOptions options;
  options.functional = false;
  options.check_hazards = false;
  options.compile.schedule = schedule;
  return kernels::run_problem(info->make(shape, dtype, chip), chip, options);
}

// Simulated time of a library kernel in timing-only mode, in ms.
double library_ms(const std::string& kernel, const std::vector<std::int64_t>& shape,
                  const arch::ChipConfig& chip, bool schedule) {
  return time_library_kernel(kernel, shape, DType::kBFloat16, chip, schedule).simulated_ns * 1e-6;
}

// TensorE busy fraction and the busiest DMA engine's busy fraction of a library kernel run
// (timing only), in percent: what a profile's "active time" of the engines shows.
std::pair<double, double> library_active_percent(const std::string& kernel,
                                                 const std::vector<std::int64_t>& shape,
                                                 DType dtype, const arch::ChipConfig& chip,
                                                 bool schedule) {
  const kernels::ProblemReport r = time_library_kernel(kernel, shape, dtype, chip, schedule);
  const sim::TimingReport& t = r.launch.timing.at(0);
  double tensor = 0, dma = 0;
  for (const auto& q : t.queues)
    if (q.queue.engine == isa::Engine::kTensor) tensor = q.busy_ns;
  for (const auto& e : t.dma_engines) dma = std::max(dma, e.busy_ns);
  return {100.0 * tensor / t.total_ns, 100.0 * dma / t.total_ns};
}

// Builds and times a kernel written here (timing only: the inputs are zeros).
runtime::LaunchResult time_kernel(const kernel::KernelFn& fn,
                                  const std::vector<kernel::TensorSpec>& inputs,
                                  const arch::ChipConfig& chip, bool schedule = true) {
  runtime::BuildOptions build;
  build.compile.schedule = schedule;
  runtime::BuiltKernel built = runtime::build(fn, inputs, chip, build);
  runtime::LaunchOptions options;
  options.functional = false;
  options.check_hazards = false;
  std::vector<runtime::HostTensor> host;
  for (const auto& s : inputs) host.push_back(runtime::HostTensor::zeros(s.name, s.dtype, s.shape));
  return runtime::launch(built, chip, host, options);
}

// Busy time of the busiest DMA engine over a kernel that issues one transfer (ns): what a
// profile shows as the transfer's activity on its engine (the queue's fixed latency before
// the engine starts is not part of it).
double dma_engine_busy_ns(const kernel::KernelFn& fn, const std::vector<kernel::TensorSpec>& inputs,
                          const arch::ChipConfig& chip) {
  const runtime::LaunchResult r = time_kernel(fn, inputs, chip);
  double busiest = 0;
  for (const auto& e : r.timing.at(0).dma_engines) busiest = std::max(busiest, e.busy_ns);
  return busiest;
}

// Issue interval of a chain of dependent [1, 1] ScalarE activations (ns per instruction).
double scalar_chain_ns(const arch::ChipConfig& chip) {
  constexpr int kChain = 64;
  auto fn = [](std::span<const Tensor>) {
    Tensor t = nl::ndarray({1, 1}, DType::kFloat32, nl::sbuf, "t");
    nisa::memset(t, 0.5f);
    for (int i = 0; i < kChain; ++i)
      nisa::activation(t, isa::ActivationFunc::kCopy, t,
                       {.common = {.engine = isa::Engine::kScalar}});
    return std::vector<Tensor>{};
  };
  runtime::BuiltKernel built = runtime::build(fn, {}, chip, {});
  runtime::LaunchOptions options;
  options.functional = false;
  const runtime::LaunchResult r = runtime::launch(built, chip, {}, options);
  const auto& program = built.compiled.programs[0];
  std::vector<double> starts;
  for (std::size_t i = 0; i < program.instructions.size(); ++i)
    if (isa::op_name(program.instructions[i].op) == "activation")
      starts.push_back(r.runs[0].times[i].start);
  std::sort(starts.begin(), starts.end());
  return (starts.back() - starts.front()) / static_cast<double>(starts.size() - 1);
}

// ---------------------------------------------------------------------------------------
// The fused Mamba tutorial's kernels (mamba_v1, v2, v3 of mamba_nki_kernels.py, SDK 2.23),
// instruction for instruction: delta, u [batch, channels, seq]; A [channels, states];
// B, C [batch, states, seq]; all fp32. A partition broadcast `x.broadcast_to((128, F))` of a
// one-partition row is what NKI lowers to a TensorE matmul of a ones row into PSUM (ARCH-v2,
// "Alternative use case"), so the multiplications by B and C read one operand from PSUM.

constexpr std::int64_t kMambaSeqTile = 512;  // mamba_v3's seq_len_fsize

Tensor broadcast_row(const Tensor& ones, const Tensor& row) {
  Tensor out = nl::ndarray({ones.dim(1), row.dim(1)}, DType::kFloat32, nl::psum, "bcast");
  nisa::nc_matmul(out, ones, row);
  return out;
}

void vector_tensor_tensor(const Tensor& dst, const Tensor& a, const Tensor& b, isa::AluOp op) {
  nisa::tensor_tensor(dst, a, b, op, {.engine = isa::Engine::kVector});
}

// Steps 1-6 for one (batch, state, channel tile) over seq columns [s0, s0 + len) of the
// loaded delta/u tiles, accumulating into acc; returns the scan result.
Tensor mamba_steps(const Tensor& delta_i, const Tensor& u_i, const Tensor& a_i, const Tensor& b_row,
                   const Tensor& c_row, const Tensor& ones, const Tensor& acc, std::int64_t s0,
                   std::int64_t len, const kernel::Scalar& initial, const Tensor& hoisted_delta_u) {
  const std::int64_t p = delta_i.dim(0);
  const auto cols = nl::ds(s0, len);
  Tensor delta_a = nl::ndarray({p, len}, DType::kFloat32, nl::sbuf, "deltaA");
  nisa::activation(delta_a, isa::ActivationFunc::kExp, delta_i(nl::all, cols),
                   {.scale = a_i, .common = {.engine = isa::Engine::kScalar}});
  Tensor delta_u = hoisted_delta_u.valid() ? hoisted_delta_u(nl::all, cols) : Tensor{};
  if (!delta_u.valid()) {
    delta_u = nl::ndarray({p, len}, DType::kFloat32, nl::sbuf, "deltaU");
    vector_tensor_tensor(delta_u, delta_i(nl::all, cols), u_i(nl::all, cols),
                         isa::AluOp::kMultiply);
  }
  Tensor delta_bu = nl::ndarray({p, len}, DType::kFloat32, nl::sbuf, "deltaBu");
  vector_tensor_tensor(delta_bu, delta_u, broadcast_row(ones, b_row), isa::AluOp::kMultiply);
  Tensor scan = nl::ndarray({p, len}, DType::kFloat32, nl::sbuf, "scan_res");
  nisa::tensor_tensor_scan(scan, delta_a, delta_bu, initial, isa::AluOp::kMultiply,
                           isa::AluOp::kAdd, {.engine = isa::Engine::kVector});
  Tensor scan_c = nl::ndarray({p, len}, DType::kFloat32, nl::sbuf, "scanC");
  vector_tensor_tensor(scan_c, scan, broadcast_row(ones, c_row), isa::AluOp::kMultiply);
  vector_tensor_tensor(acc(nl::all, cols), acc(nl::all, cols), scan_c, isa::AluOp::kAdd);
  return scan;
}

std::vector<Tensor> mamba(std::span<const Tensor> in, int version) {
  const Tensor &delta = in[0], &u = in[1], &a = in[2], &b = in[3], &c = in[4];
  const std::int64_t batch = delta.dim(0), channels = delta.dim(1), seq = delta.dim(2),
                     states = a.dim(1);
  const std::int64_t p = nl::tile_size::pmax(), tiles = channels / p;
  Tensor out = nl::ndarray({batch, channels, seq}, DType::kFloat32, nl::shared_hbm, "out");
  Tensor ones = nl::ndarray({1, p}, DType::kFloat32, nl::sbuf, "ones");
  nisa::memset(ones, 1.0f);
  auto load = [](const Tensor& src, const char* name) {
    Tensor t = nl::ndarray(src.shape(), DType::kFloat32, nl::sbuf, name);
    nisa::dma_copy(t, src);
    return t;
  };
  for (std::int64_t ib = 0; ib < batch; ++ib) {
    if (version == 1) {
      // States outside, channel tiles inside: delta and u are loaded again for every state.
      std::vector<Tensor> acc;
      for (std::int64_t t = 0; t < tiles; ++t)
        acc.push_back(nl::zeros({p, seq}, DType::kFloat32, nl::sbuf, "scanC_accum"));
      for (std::int64_t is = 0; is < states; ++is)
        for (std::int64_t t = 0; t < tiles; ++t) {
          const auto rows = nl::ds(t * p, p);
          Tensor delta_i = load(delta(ib, rows, nl::all), "delta_i");
          Tensor a_i = load(a(rows, nl::ds(is, 1)), "A_i");
          Tensor u_i = load(u(ib, rows, nl::all), "u_i");
          Tensor b_i = load(b(ib, nl::ds(is, 1), nl::all), "B_i");
          Tensor c_i = load(c(ib, nl::ds(is, 1), nl::all), "C_i");
          mamba_steps(delta_i, u_i, a_i, b_i, c_i, ones, acc[static_cast<std::size_t>(t)], 0, seq,
                      0.0f, Tensor{});
        }
      for (std::int64_t t = 0; t < tiles; ++t)
        nisa::dma_copy(out(ib, nl::ds(t * p, p), nl::all), acc[static_cast<std::size_t>(t)]);
      continue;
    }
    // v2, v3: channel tiles outside, delta/u loaded once per tile and reused by every state.
    for (std::int64_t t = 0; t < tiles; ++t) {
      const auto rows = nl::ds(t * p, p);
      Tensor acc = nl::zeros({p, seq}, DType::kFloat32, nl::sbuf, "scanC_accum");
      Tensor delta_i = load(delta(ib, rows, nl::all), "delta_i");
      Tensor u_i = load(u(ib, rows, nl::all), "u_i");
      // delta_i * u_i does not depend on the state: the compiler hoists it out of the state
      // loop (loop-invariant code motion), which the tutorial's own VectorE busy times show
      // (docs/validation.md). v1 reloads delta and u per state, so there it stays inside.
      Tensor du = nl::ndarray({p, seq}, DType::kFloat32, nl::sbuf, "deltaU");
      vector_tensor_tensor(du, delta_i, u_i, isa::AluOp::kMultiply);
      for (std::int64_t is = 0; is < states; ++is) {
        Tensor a_i = load(a(rows, nl::ds(is, 1)), "A_i");
        if (version == 2) {
          Tensor b_i = load(b(ib, nl::ds(is, 1), nl::all), "B_i");
          Tensor c_i = load(c(ib, nl::ds(is, 1), nl::all), "C_i");
          mamba_steps(delta_i, u_i, a_i, b_i, c_i, ones, acc, 0, seq, 0.0f, du);
          continue;
        }
        // v3: seq tiled by 512; the scan carries its last column into the next tile.
        Tensor scan_init = nl::zeros({p, 1}, DType::kFloat32, nl::sbuf, "scan_init");
        for (std::int64_t s0 = 0; s0 < seq; s0 += kMambaSeqTile) {
          const auto cols = nl::ds(s0, kMambaSeqTile);
          Tensor b_i = load(b(ib, nl::ds(is, 1), cols), "B_i");
          Tensor c_i = load(c(ib, nl::ds(is, 1), cols), "C_i");
          Tensor scan =
              mamba_steps(delta_i, u_i, a_i, b_i, c_i, ones, acc, s0, kMambaSeqTile, scan_init, du);
          nisa::tensor_copy(scan_init, scan(nl::all, nl::ds(kMambaSeqTile - 1, 1)));
        }
      }
      nisa::dma_copy(out(ib, rows, nl::all), acc);
    }
  }
  return {out};
}

double mamba_ms(int version, std::int64_t seq, std::int64_t channels, const arch::ChipConfig& chip,
                bool schedule) {
  constexpr std::int64_t kBatch = 1, kStates = 16;
  const std::vector<kernel::TensorSpec> inputs = {
      {"delta", DType::kFloat32, {kBatch, channels, seq}},
      {"u", DType::kFloat32, {kBatch, channels, seq}},
      {"A", DType::kFloat32, {channels, kStates}},
      {"B", DType::kFloat32, {kBatch, kStates, seq}},
      {"C", DType::kFloat32, {kBatch, kStates, seq}}};
  const runtime::LaunchResult r = time_kernel(
      [version](std::span<const Tensor> in) { return mamba(in, version); }, inputs, chip, schedule);
  return r.simulated_ns * 1e-6;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const arch::ChipConfig trn1 = arch::load_preset("trn1");
  const arch::ChipConfig trn2 = arch::load_preset("trn2");
  std::vector<Case> cases;
  // Each case runs twice: in the kernel's program order on every engine (compile option
  // schedule = false), which is how the published NKI kernels' affine loops were issued
  // (docs/validation.md), and list-scheduled by trnsim's compiler.
  if (!quick) {
    for (const auto& [kernel, ms] :
         std::vector<std::pair<std::string, double>>{{"tutorial_matmul_tiled", 51.80},
                                                     {"tutorial_matmul_hoisted", 42.96},
                                                     {"tutorial_matmul_blocked", 22.07},
                                                     {"tutorial_matmul_optimized", 6.97}}) {
      const std::vector<std::int64_t> shape = {4096, 8192, 8192};
      cases.push_back({kernel + " 4096x8192 @ 8192x8192 bf16", kernel, kMatmulTutorial, "trn1", ms,
                       "ms", library_ms(kernel, shape, trn1, false),
                       library_ms(kernel, shape, trn1, true)});
    }
  }
  // Fused Mamba tutorial: batch 1, 4096 channels, 16 states, fp32.
  auto mamba_case = [&](int version, std::int64_t seq, double ms) {
    cases.push_back({fmt::format("mamba_v{} seq {}, 4096 channels", version, seq),
                     fmt::format("mamba_v{}", version), kMambaTutorial, "trn1", ms, "ms",
                     mamba_ms(version, seq, 4096, trn1, false),
                     mamba_ms(version, seq, 4096, trn1, true)});
  };
  mamba_case(1, 512, 2.34);
  mamba_case(2, 512, 1.61);
  for (const auto& [seq, ms] : std::vector<std::pair<std::int64_t, double>>{{512, 1.6},
                                                                            {1024, 3.3},
                                                                            {2048, 6.6},
                                                                            {3072, 10.1},
                                                                            {4096, 13.3},
                                                                            {5120, 17.3},
                                                                            {6144, 19.6},
                                                                            {7168, 24.2},
                                                                            {8192, 27.8}})
    mamba_case(3, seq, ms);
  {
    const double ns = dma_engine_busy_ns(
        [](std::span<const Tensor> in) {
          Tensor t = nl::ndarray({4, 4096}, DType::kBFloat16, nl::sbuf, "t");
          nisa::dma_copy(t, in[0]);
          return std::vector<Tensor>{};
        },
        {{"x", DType::kBFloat16, {4, 4096}}}, trn2);
    cases.push_back({"dma_copy [4, 4096] bf16 HBM->SBUF, engine activity", "dma_copy", kDmaOverview,
                     "trn2", 1416, "ns", ns, ns});
  }
  {
    const double ns = scalar_chain_ns(trn1);
    cases.push_back({"dependent 1-element ScalarE chain, issue interval", "scalar_chain",
                     kPerfGuide, "trn1", 189, "ns", ns, ns});
  }

  fmt::print(
      "| case | chip | published | trnsim (kernel order) | error | trnsim (list-scheduled) | error "
      "| source |\n"
      "|---|---|---|---|---|---|---|---|\n");
  std::vector<double> errors, errors_scheduled;
  std::vector<std::pair<std::string, std::vector<double>>> groups;  // |error| per published kernel
  for (const Case& c : cases) {
    const double err = error_percent(c.predicted, c.published),
                 err_s = error_percent(c.scheduled, c.published);
    errors.push_back(std::abs(err));
    errors_scheduled.push_back(std::abs(err_s));
    if (groups.empty() || groups.back().first != c.group) groups.push_back({c.group, {}});
    groups.back().second.push_back(std::abs(err));
    fmt::print("| {} | {} | {:g} {} | {:.4g} {} | {:+.1f}% | {:.4g} {} | {:+.1f}% | {} |\n", c.name,
               c.chip, c.published, c.unit, c.predicted, c.unit, err, c.scheduled, c.unit, err_s,
               c.source);
  }
  std::vector<double> per_kernel;
  for (const auto& g : groups) per_kernel.push_back(median(g.second));
  fmt::print(
      "\n{} cases, kernel order: median |error| {:.1f}%, max {:.1f}%; median over the {} published "
      "kernels "
      "(each the median of its sizes) {:.1f}%\n",
      errors.size(), median(errors), *std::max_element(errors.begin(), errors.end()),
      per_kernel.size(), median(per_kernel));
  fmt::print("{} cases, list-scheduled: median |error| {:.1f}%, max {:.1f}%\n",
             errors_scheduled.size(), median(errors_scheduled),
             *std::max_element(errors_scheduled.begin(), errors_scheduled.end()));

  if (!quick) {
    // The same tutorial kernels on trn2 with fp32 inputs (NKI kernel optimization guide):
    // only engine active times are published. Blocked and fully optimized overflow SBUF in
    // fp32 without the compiler spills hardware used, so only the first two run here.
    fmt::print(
        "\n| engine active time, 4096x8192 @ 8192x8192 fp32 | chip | published | trnsim (kernel "
        "order) | "
        "difference | trnsim (list-scheduled) | difference | source "
        "|\n|---|---|---|---|---|---|---|---|\n");
    struct Active {
      std::string kernel;
      double tensor, dma;
      std::string note;
    };
    for (const Active& a : std::vector<Active>{
             {"tutorial_matmul_tiled", 87.28, 99.93, " (the same page also says 69.83%)"},
             {"tutorial_matmul_hoisted", 99.85, 99.73, ""}}) {
      const std::vector<std::int64_t> shape = {4096, 8192, 8192};
      const auto [tensor, dma] =
          library_active_percent(a.kernel, shape, DType::kFloat32, trn2, false);
      const auto [tensor_s, dma_s] =
          library_active_percent(a.kernel, shape, DType::kFloat32, trn2, true);
      fmt::print(
          "| {} TensorE | trn2 | {:.2f}%{} | {:.1f}% | {:+.1f} points | {:.1f}% | {:+.1f} points | "
          "{} |\n",
          a.kernel, a.tensor, a.note, tensor, tensor - a.tensor, tensor_s, tensor_s - a.tensor,
          kKernelOptimization);
      fmt::print(
          "| {} DMA (busiest engine) | trn2 | {:.2f}% | {:.1f}% | {:+.1f} points | {:.1f}% | "
          "{:+.1f} points | {} |\n",
          a.kernel, a.dma, dma, dma - a.dma, dma_s, dma_s - a.dma, kKernelOptimization);
    }
  }
  return 0;
}
