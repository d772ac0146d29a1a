// nki.language: declarations, program ids, tile sizes, and the convenience helpers that
// expand into one or a few nki.isa operations.
#include <fmt/core.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>

#include "arch/arch.h"
#include "kernel/kernel.h"
#include "kernel/tracer.h"

namespace trnsim::nl {

using kernel::KernelError;
using kernel::origin_of;
using kernel::Tracer;

namespace {
Tracer& tracer(const Loc& loc) {
  return Tracer::current(loc);
}
std::int64_t count(const arch::Param& p) {
  return static_cast<std::int64_t>(p.value);
}

// The shape of a fresh on-chip tile holding `x` ([n] HBM vectors become [1, n]).
Shape tile_shape(const Tensor& x) {
  if (x.ndim() == 1) return {1, x.shape()[0]};
  return x.shape();
}

void require_on_chip(const Tensor& x, const char* what, const Loc& loc) {
  if (!kernel::is_on_chip(x.buffer()))
    throw KernelError(origin_of(loc), fmt::format("{} needs an on-chip tile; '{}' is in {}", what,
                                                  x.name(), kernel::buffer_name(x.buffer())));
}
}  // namespace

const arch::ChipConfig& chip() {
  return tracer(Loc::current()).chip();
}

TileSizes tile_sizes(const arch::ChipConfig& c) {
  // NKI's gemm_moving_fmax is one PSUM bank of fp32 (512): gen4 may stream up to 4096
  // columns into several banks, but a bank-sized tile is what the accumulation pattern of a
  // kernel needs.
  const std::int64_t bank = static_cast<std::int64_t>(arch::psum_bank_bytes(c)) / 4;
  return {.pmax = count(c.sbuf.partitions),
          .gemm_stationary_fmax = count(c.tensor.cols),
          .gemm_moving_fmax = std::min(count(c.tensor.moving_free_max), bank),
          .psum_bank_fmax = bank,
          .psum_num_banks = count(c.psum.banks),
          .bn_stats_fmax = 512,
          .sbuf_bytes_per_partition = count(c.sbuf.bytes_per_partition)};
}

namespace tile_size {
std::int64_t pmax() {
  return tile_sizes(chip()).pmax;
}
std::int64_t gemm_stationary_fmax() {
  return tile_sizes(chip()).gemm_stationary_fmax;
}
std::int64_t gemm_moving_fmax() {
  return tile_sizes(chip()).gemm_moving_fmax;
}
std::int64_t psum_bank_fmax() {
  return tile_sizes(chip()).psum_bank_fmax;
}
std::int64_t psum_num_banks() {
  return tile_sizes(chip()).psum_num_banks;
}
std::int64_t bn_stats_fmax() {
  return tile_sizes(chip()).bn_stats_fmax;
}
std::int64_t sbuf_bytes_per_partition() {
  return tile_sizes(chip()).sbuf_bytes_per_partition;
}
}  // namespace tile_size

int program_id(int axis) {
  if (axis != 0)
    throw KernelError({}, "program_id: only axis 0 exists (logical-core launches are 1-D)");
  return tracer(Loc::current()).ir().program_id;
}
int num_programs(int axis) {
  if (axis != 0) throw KernelError({}, "num_programs: only axis 0 exists");
  return tracer(Loc::current()).ir().num_programs;
}

Tensor ndarray(Shape shape, DType dtype, kernel::Buffer buffer, std::string name, Loc loc) {
  return tracer(loc).declare(std::move(shape), dtype, buffer, std::move(name), loc);
}

Tensor ndarray_at(Shape shape, DType dtype, kernel::Buffer buffer, std::uint64_t byte_offset,
                  std::string name, Loc loc) {
  if (!kernel::is_on_chip(buffer))
    throw KernelError(origin_of(loc), "ndarray_at places on-chip tiles only");
  return tracer(loc).declare(std::move(shape), dtype, buffer, std::move(name), loc,
                             kernel::TensorRole::kScratch, byte_offset);
}

Tensor shared_constant(Shape shape, DType dtype, std::vector<std::uint8_t> bytes, std::string name,
                       Loc loc) {
  Tracer& t = tracer(loc);
  Tensor out = t.declare(std::move(shape), dtype, kernel::Buffer::kSharedHbm, std::move(name), loc,
                         kernel::TensorRole::kConstant);
  kernel::Storage& s = t.ir().storages[out.storage()];
  if (bytes.size() != s.bytes)
    throw KernelError(s.origin, fmt::format("shared_constant '{}' [{}] of {} holds {} bytes; "
                                            "its data has {}",
                                            s.name, fmt::join(s.shape, ", "), numerics::name(dtype),
                                            s.bytes, bytes.size()));
  s.constant = std::make_shared<const std::vector<std::uint8_t>>(std::move(bytes));
  return out;
}

void device_print(const std::string& prefix, const Tensor& tensor, Loc loc) {
  Tracer& t = tracer(loc);
  const kernel::Storage& s = t.storage_of(tensor, loc);
  if (s.buffer == kernel::Buffer::kPsum)
    throw KernelError(origin_of(loc), fmt::format("device_print of '{}' in psum: print an SBUF or "
                                                  "HBM tensor (copy the tile to SBUF first)",
                                                  s.name));
  if (t.in_loop())
    throw KernelError(origin_of(loc),
                      "device_print inside a dynamic loop (nl.fori_loop / "
                      "nl.while_loop): each trip would overwrite the one "
                      "snapshot; print after the loop");
  Shape shape;
  for (int d = 0; d < tensor.ndim(); ++d) shape.push_back(tensor.dim(d));
  const Tensor snapshot = t.declare(shape, tensor.dtype(), kernel::Buffer::kPrivateHbm,
                                    fmt::format("print '{}'", prefix), loc);
  nisa::dma_copy(snapshot, tensor, {}, loc);
  t.ir().prints.push_back({prefix, snapshot.storage(), origin_of(loc)});
}

std::size_t trace_position(Loc loc) {
  return tracer(loc).ir().instructions.size();
}

Recorded recorded_since(std::size_t position, Loc loc) {
  Tracer& t = tracer(loc);
  return {t.serial(), std::min(position, t.ir().instructions.size()), t.ir().instructions.size()};
}

void depends_on(const Recorded& consumer, const Recorded& producer, Loc loc) {
  Tracer& t = tracer(loc);
  if (consumer.trace != t.serial() || producer.trace != t.serial())
    throw KernelError(origin_of(loc), "depends_on: an instruction handle of another kernel trace");
  t.add_dependency(consumer.first, consumer.end, producer.first, producer.end, loc);
}

Tensor zeros(Shape shape, DType dtype, kernel::Buffer buffer, std::string name, Loc loc) {
  return full(std::move(shape), 0.0f, dtype, buffer, std::move(name), loc);
}

Tensor full(Shape shape, float value, DType dtype, kernel::Buffer buffer, std::string name,
            Loc loc) {
  if (!kernel::is_on_chip(buffer))
    throw KernelError(origin_of(loc),
                      "nl::full/zeros create on-chip tiles; fill HBM by storing a tile");
  Tensor t = ndarray(std::move(shape), dtype, buffer, std::move(name), loc);
  nisa::memset(t, value, {}, loc);
  return t;
}

Tensor load(const Tensor& src, std::optional<DType> dtype, Loc loc) {
  if (!kernel::is_hbm(src.buffer()))
    throw KernelError(origin_of(loc), fmt::format("nl::load reads HBM; '{}' is in {}", src.name(),
                                                  kernel::buffer_name(src.buffer())));
  Tensor t = ndarray(tile_shape(src), dtype.value_or(src.dtype()), sbuf, "", loc);
  nisa::dma_copy(t, src, {}, loc);
  return t;
}

void store(const Tensor& dst, const Tensor& src, Loc loc) {
  if (!kernel::is_hbm(dst.buffer()))
    throw KernelError(origin_of(loc), fmt::format("nl::store writes HBM; '{}' is in {}", dst.name(),
                                                  kernel::buffer_name(dst.buffer())));
  // DMA cannot read PSUM: go through an SBUF tile, as NKI's helper does.
  const Tensor staged = src.buffer() == psum ? copy(src, dst.dtype(), loc) : src;
  nisa::dma_copy(dst, staged, {}, loc);
}

void assign(const Tensor& dst, const Tensor& src, Loc loc) {
  if (dst.shape() != src.shape())
    throw KernelError(origin_of(loc),
                      fmt::format("assigning a [{}] tensor to a [{}] view (the same shape)",
                                  fmt::join(src.shape(), ", "), fmt::join(dst.shape(), ", ")));
  if (kernel::is_hbm(dst.buffer()) && !kernel::is_hbm(src.buffer()))
    store(dst, src, loc);
  else if (kernel::is_hbm(src.buffer()) && dst.buffer() == psum)  // DMA cannot write PSUM
    nisa::tensor_copy(dst, load(src, std::nullopt, loc), {}, loc);
  else if (kernel::is_hbm(src.buffer()))
    nisa::dma_copy(dst, src, {}, loc);
  else
    nisa::tensor_copy(dst, src, {}, loc);
}

void assign(const Tensor& dst, float value, Loc loc) {
  if (kernel::is_hbm(dst.buffer()))
    throw KernelError(origin_of(loc),
                      fmt::format("assigning a number to a view of '{}' in {} (a number fills an "
                                  "SBUF or PSUM view; write HBM from a tile)",
                                  dst.name(), kernel::buffer_name(dst.buffer())));
  nisa::memset(dst, value, {}, loc);
}

Tensor copy(const Tensor& src, std::optional<DType> dtype, Loc loc) {
  require_on_chip(src, "nl::copy", loc);
  Tensor t = ndarray(src.shape(), dtype.value_or(src.dtype()), sbuf, "", loc);
  nisa::tensor_copy(t, src, {}, loc);
  return t;
}

Tensor transpose(const Tensor& x, std::optional<DType> dtype, Loc loc) {
  require_on_chip(x, "nl::transpose", loc);
  if (x.ndim() != 2) throw KernelError(origin_of(loc), "nl::transpose takes a 2-D tile");
  Tensor t = ndarray({x.shape()[1], x.shape()[0]}, dtype.value_or(x.dtype()), psum, "", loc);
  nisa::nc_transpose(t, x, {.engine = isa::Engine::kTensor}, loc);
  return t;
}

Tensor matmul(const Tensor& x, const Tensor& y, bool transpose_x, Loc loc) {
  require_on_chip(x, "nl::matmul", loc);
  require_on_chip(y, "nl::matmul", loc);
  Tensor stationary = x;
  if (!transpose_x)
    stationary = copy(transpose(x, std::nullopt, loc), x.dtype(), loc);  // [M, K] -> [K, M]
  const std::int64_t m = stationary.size() / stationary.shape()[0];
  const std::int64_t n = y.size() / y.shape()[0];
  Tensor out = ndarray({m, n}, DType::kFloat32, psum, "", loc);
  nisa::nc_matmul(out, stationary, y, {}, loc);
  return out;
}

Tensor activation(isa::ActivationFunc func, const Tensor& x, Loc loc) {
  require_on_chip(x, "nl::activation", loc);
  Tensor t = ndarray(x.shape(), x.buffer() == psum ? DType::kFloat32 : x.dtype(), sbuf, "", loc);
  nisa::activation(t, func, x, {}, loc);
  return t;
}

Tensor exp(const Tensor& x, Loc loc) {
  return activation(isa::ActivationFunc::kExp, x, loc);
}

namespace {
Tensor binary(const Tensor& x, const kernel::Scalar& y, isa::AluOp op, const Loc& loc) {
  require_on_chip(x, "an elementwise helper", loc);
  Tensor t = ndarray(x.shape(), x.buffer() == psum ? DType::kFloat32 : x.dtype(), sbuf, "", loc);
  const Tensor* ty = std::get_if<Tensor>(&y);
  if (ty != nullptr && ty->size() != ty->shape()[0]) {
    nisa::tensor_tensor(t, x, *ty, op, {}, loc);  // a full tile
  } else {
    nisa::tensor_scalar(t, x, op, y, {}, loc);  // an immediate or a [P, 1] column
  }
  return t;
}

Tensor reduce(const Tensor& x, isa::AluOp op, const Loc& loc) {
  require_on_chip(x, "a reduction helper", loc);
  Tensor t = ndarray({x.shape()[0], 1}, DType::kFloat32, sbuf, "", loc);
  nisa::tensor_reduce(t, x, op, {}, loc);
  return t;
}
}  // namespace

Tensor add(const Tensor& x, const kernel::Scalar& y, Loc loc) {
  return binary(x, y, isa::AluOp::kAdd, loc);
}
Tensor subtract(const Tensor& x, const kernel::Scalar& y, Loc loc) {
  return binary(x, y, isa::AluOp::kSubtract, loc);
}
Tensor multiply(const Tensor& x, const kernel::Scalar& y, Loc loc) {
  return binary(x, y, isa::AluOp::kMultiply, loc);
}
Tensor maximum(const Tensor& x, const kernel::Scalar& y, Loc loc) {
  return binary(x, y, isa::AluOp::kMaximum, loc);
}
Tensor mod(const Tensor& x, const kernel::Scalar& y, Loc loc) {
  return binary(x, y, isa::AluOp::kMod, loc);
}
Tensor fmod(const Tensor& x, const kernel::Scalar& y, Loc loc) {
  return binary(x, y, isa::AluOp::kFmod, loc);
}

namespace {
// The dtype of a new tile computed from x: `dtype`, else x's (float32 for a PSUM x).
DType result_dtype(const Tensor& x, std::optional<DType> dtype) {
  return dtype.value_or(x.buffer() == psum ? DType::kFloat32 : x.dtype());
}

// x - (x op divisor) in one scalar_tensor_tensor: the remainder is exact, so the difference
// is the integral value exactly (for finite x).
Tensor minus_remainder(const Tensor& x, isa::AluOp op, float divisor, std::optional<DType> dtype,
                       const char* what, const Loc& loc) {
  require_on_chip(x, what, loc);
  // scalar_tensor_tensor reads x twice; both reads may not come from PSUM.
  const Tensor src = x.buffer() == psum ? copy(x, DType::kFloat32, loc) : x;
  Tensor t = ndarray(x.shape(), dtype.value_or(src.dtype()), sbuf, "", loc);
  nisa::scalar_tensor_tensor(t, src, op, divisor, isa::AluOp::kSubtract, src, {.reverse1 = true},
                             loc);
  return t;
}
}  // namespace

Tensor floor(const Tensor& x, std::optional<DType> dtype, Loc loc) {
  return minus_remainder(x, isa::AluOp::kMod, 1.0f, dtype, "nl::floor", loc);
}
Tensor ceil(const Tensor& x, std::optional<DType> dtype, Loc loc) {
  return minus_remainder(x, isa::AluOp::kMod, -1.0f, dtype, "nl::ceil", loc);
}
Tensor trunc(const Tensor& x, std::optional<DType> dtype, Loc loc) {
  return minus_remainder(x, isa::AluOp::kFmod, 1.0f, dtype, "nl::trunc", loc);
}

Tensor tan(const Tensor& x, std::optional<DType> dtype, Loc loc) {
  require_on_chip(x, "nl::tan", loc);
  // fmod(x, fp32 pi) is exact and inside (-pi, pi), the range ScalarE's sin is valid on; tan
  // has period pi, so tan(r) is tan(x) up to the argument error of fp32 pi.
  constexpr float kPi = 3.14159265358979323846f;
  const DType f32 = DType::kFloat32;
  Tensor r = ndarray(x.shape(), f32, sbuf, "", loc);
  nisa::tensor_scalar(r, x, isa::AluOp::kFmod, kPi, {}, loc);
  // A bias of -0 adds nothing, not even to -0 (+0 would: tan(-0) is -0).
  const nisa::ActivationOptions no_bias{.bias = -0.0f};
  Tensor s = ndarray(x.shape(), f32, sbuf, "", loc);
  nisa::activation(s, isa::ActivationFunc::kSin, r, no_bias, loc);
  Tensor c = ndarray(x.shape(), f32, sbuf, "", loc);
  nisa::activation(c, isa::ActivationFunc::kCos, r, no_bias, loc);
  Tensor t = ndarray(x.shape(), result_dtype(x, dtype), sbuf, "", loc);
  nisa::tensor_tensor(t, s, c, isa::AluOp::kDivide, {}, loc);
  return t;
}

namespace {

// r = fmod(x, 2 pi) in fp32 and ScalarE's sin of r / 2 (inside [-pi, pi]): what sin and cos
// build on.
std::pair<Tensor, Tensor> half_angle_sine(const Tensor& x, const char* what, const Loc& loc) {
  require_on_chip(x, what, loc);
  constexpr float kTwoPi = 6.28318530717958647692f;
  const DType f32 = DType::kFloat32;
  Tensor r = ndarray(x.shape(), f32, sbuf, "", loc);
  nisa::tensor_scalar(r, x, isa::AluOp::kFmod, kTwoPi, {}, loc);
  // A bias of -0 adds nothing, not even to -0 (+0 would: sin(-0) is -0).
  Tensor s = ndarray(x.shape(), f32, sbuf, "", loc);
  nisa::activation(s, isa::ActivationFunc::kSin, r, {.scale = 0.5f, .bias = -0.0f}, loc);
  return {r, s};
}

}  // namespace

Tensor sin(const Tensor& x, std::optional<DType> dtype, Loc loc) {
  const auto [r, s] = half_angle_sine(x, "nl::sin", loc);
  Tensor c = ndarray(x.shape(), DType::kFloat32, sbuf, "", loc);
  nisa::activation(c, isa::ActivationFunc::kCos, r, {.scale = 0.5f, .bias = -0.0f}, loc);
  Tensor t = ndarray(x.shape(), result_dtype(x, dtype), sbuf, "", loc);
  // (s * 2) * c: the doubling is exact.
  nisa::scalar_tensor_tensor(t, s, isa::AluOp::kMultiply, 2.0f, isa::AluOp::kMultiply, c, {}, loc);
  return t;
}

Tensor cos(const Tensor& x, std::optional<DType> dtype, Loc loc) {
  const auto [r, s] = half_angle_sine(x, "nl::cos", loc);
  Tensor minus_twice_square = ndarray(x.shape(), DType::kFloat32, sbuf, "", loc);
  nisa::scalar_tensor_tensor(minus_twice_square, s, isa::AluOp::kMultiply, -2.0f,
                             isa::AluOp::kMultiply, s, {}, loc);
  Tensor t = ndarray(x.shape(), result_dtype(x, dtype), sbuf, "", loc);
  nisa::tensor_scalar(t, minus_twice_square, isa::AluOp::kAdd, 1.0f, {}, loc);
  return t;
}

Tensor invert(const Tensor& x, std::optional<DType> dtype, Loc loc) {
  require_on_chip(x, "nl::invert", loc);
  Tensor t = ndarray(x.shape(), dtype.value_or(x.dtype()), sbuf, "", loc);
  nisa::tensor_scalar(t, x, isa::AluOp::kInvert, 0.0f, {}, loc);  // the operand is ignored
  return t;
}

Tensor max(const Tensor& x, Loc loc) {
  return reduce(x, isa::AluOp::kMaximum, loc);
}
Tensor sum(const Tensor& x, Loc loc) {
  return reduce(x, isa::AluOp::kAdd, loc);
}

Tensor softmax(const Tensor& x, std::optional<DType> dtype, Loc loc) {
  require_on_chip(x, "nl::softmax", loc);
  const std::int64_t p = x.shape()[0];
  // -max per row, then exp(x - max) with the row sums accumulated by the same instruction,
  // then a multiply by 1/sum.
  Tensor neg_max = ndarray({p, 1}, DType::kFloat32, sbuf, "", loc);
  nisa::tensor_reduce(neg_max, x, isa::AluOp::kMaximum, {.negate = true}, loc);
  Tensor e = ndarray(x.shape(), DType::kFloat32, sbuf, "", loc);
  Tensor sums = ndarray({p, 1}, DType::kFloat32, sbuf, "", loc);
  nisa::activation(e, isa::ActivationFunc::kExp, x, {.bias = neg_max, .reduce_res = sums}, loc);
  Tensor inv = ndarray({p, 1}, DType::kFloat32, sbuf, "", loc);
  nisa::reciprocal(inv, sums, {}, loc);
  Tensor out = ndarray(x.shape(), dtype.value_or(x.buffer() == psum ? DType::kFloat32 : x.dtype()),
                       sbuf, "", loc);
  nisa::tensor_scalar(out, e, isa::AluOp::kMultiply, inv, {}, loc);
  return out;
}

}  // namespace trnsim::nl
