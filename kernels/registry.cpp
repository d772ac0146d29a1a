#include "kernels/registry.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "numerics/numerics.h"

namespace trnsim::kernels {

namespace {

std::vector<KernelInfo>& registered() {
  static std::vector<KernelInfo> lib;
  return lib;
}

}  // namespace

bool register_kernel(KernelInfo info) {
  auto& lib = registered();
  for (const auto& k : lib)
    if (k.name == info.name) throw std::logic_error("kernel '" + info.name + "' registered twice");
  if (!info.make_problem) throw std::logic_error("kernel '" + info.name + "' has no problem maker");
  static const char* const kReserved[] = {"kernel", "shape",    "dtype",     "chip",
                                          "lnc",    "schedule", "power-ramp"};
  for (std::size_t i = 0; i < info.options.size(); ++i) {
    const KernelOption& o = info.options[i];
    const auto bad = [&](std::string_view why) {
      throw std::logic_error(fmt::format("kernel '{}': option '{}' {}", info.name, o.name, why));
    };
    if (o.name.empty() ||
        o.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
      bad("must be lower case letters, digits and '_'");
    for (const char* r : kReserved)
      if (o.name == r) bad("is a key of trnsim profile --compare");
    for (std::size_t j = 0; j < i; ++j)
      if (info.options[j].name == o.name) bad("is declared twice");
    if (o.type == KernelOption::Type::kChoice && o.choices.empty()) bad("has no choices");
    try {
      if (!(check_option_value(o, o.default_value) == o.default_value))
        bad("has a default of another type");
    } catch (const std::invalid_argument& e) {
      bad(fmt::format("has a default it rejects: {}", e.what()));
    }
  }
  lib.push_back(std::move(info));
  std::sort(lib.begin(), lib.end(),
            [](const KernelInfo& x, const KernelInfo& y) { return x.name < y.name; });
  return true;
}

const std::vector<KernelInfo>& library() {
  return registered();
}

Problem KernelInfo::make(const std::vector<std::int64_t>& shape, DType dtype,
                         const arch::ChipConfig& chip, const OptionValues& set) const {
  const OptionValues values = resolve_options(name, options, set);
  Problem p = make_problem.fn(shape, dtype, chip, values);
  const std::string changed = changed_options_text(options, values);
  if (!changed.empty()) {
    p.label += fmt::format(" [{}]", changed);
    p.options = changed_options_text(options, values, /*defaults=*/true);
  }
  return p;
}

void require_dims(const std::vector<std::int64_t>& shape, std::size_t n, std::string_view help) {
  if (shape.size() != n)
    throw std::invalid_argument(
        fmt::format("shape needs {} values ({}), got {}", n, help, shape.size()));
  for (auto d : shape)
    if (d <= 0)
      throw std::invalid_argument(fmt::format("shape values must be positive ({})", help));
}

void require_fits_hbm(std::string_view kernel, double bytes, const arch::ChipConfig& chip) {
  const auto capacity = static_cast<double>(arch::hbm_capacity_bytes(chip));
  if (!(bytes <= capacity))
    throw std::invalid_argument(fmt::format(
        "{}: the problem's inputs and outputs need {:.3g} GiB of HBM; {} has {:.3g} GiB", kernel,
        bytes / 0x1p30, chip.name, capacity / 0x1p30));
}

void check_psum_block(std::string_view kernel, std::int64_t block_m, std::int64_t block_n,
                      const arch::ChipConfig& chip) {
  const auto banks = static_cast<std::int64_t>(chip.psum.banks.value);
  if (block_m * block_n > banks)
    throw std::invalid_argument(
        fmt::format("{}: block_m x block_n = {} x {} = {} accumulators need one PSUM bank "
                    "each; {} has {}: lower block_m or block_n",
                    kernel, block_m, block_n, block_m * block_n, chip.name, banks));
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void add_scaled(std::span<double> acc,
                                                                             double x,
                                                                             const float* w) {
  double* a = acc.data();
  for (std::size_t j = 0; j < acc.size(); ++j) a[j] += x * double(w[j]);
}

double half_ulp(DType t) {
  // Types without a mantissa (integers, E8M0) are checked as if they were bf16.
  return std::ldexp(1.0, -(numerics::mantissa_bits(t).value_or(7) + 1));
}

const KernelInfo* find_kernel(std::string_view name) {
  for (const auto& k : library())
    if (k.name == name) return &k;
  return nullptr;
}

CheckResult check(const Problem& problem, const std::vector<runtime::HostTensor>& outputs,
                  std::size_t samples) {
  std::vector<std::vector<float>> inputs(problem.inputs.size());
  util::parallel_for(inputs.size(), util::resolve_threads(0),
                     [&](std::size_t i) { inputs[i] = problem.inputs[i].to_floats(); });
  CheckResult r;
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    const std::vector<float> got = outputs[o].to_floats();
    const auto n = static_cast<std::int64_t>(got.size());
    std::vector<std::int64_t> idx;
    if (static_cast<std::size_t>(n) <= samples) {
      for (std::int64_t i = 0; i < n; ++i) idx.push_back(i);
    } else {
      // A fixed stride walk that visits rows and columns of every residue, plus the corners.
      const std::int64_t step = n / static_cast<std::int64_t>(samples);
      for (std::size_t s = 0; s < samples; ++s)
        idx.push_back(
            (static_cast<std::int64_t>(s) * step + static_cast<std::int64_t>(s * 7919) % step) % n);
      idx.push_back(n - 1);
    }
    const std::vector<double> want = problem.reference(inputs, o, idx);
    for (std::size_t s = 0; s < idx.size(); ++s) {
      const double g = got[static_cast<std::size_t>(idx[s])], w = want[s];
      const double err = std::abs(g - w);
      const double rel = err / std::max(std::abs(w), 1e-30);
      ++r.checked;
      const bool bad = !(err <= problem.tolerance.abs + problem.tolerance.rel * std::abs(w));
      if (bad && r.ok) {
        r.ok = false;
        r.worst = fmt::format("output {} element {}: got {} want {}", o, idx[s], g, w);
      }
      if (err > r.max_abs_error || std::isnan(err)) {
        r.max_abs_error = std::isnan(err) ? INFINITY : err;
        if (r.ok) r.worst = fmt::format("output {} element {}: got {} want {}", o, idx[s], g, w);
      }
      if (std::abs(w) > 1e-3 && !(rel <= r.max_rel_error))
        r.max_rel_error = std::isnan(rel) ? INFINITY : rel;
    }
  }
  return r;
}

}  // namespace trnsim::kernels
