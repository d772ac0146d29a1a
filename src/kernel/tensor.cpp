// Views of storages and their lowering to access patterns.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include "kernel/kernel.h"
#include "kernel/tracer.h"

namespace trnsim::kernel {

namespace {

[[noreturn]] void fail(const Loc& loc, std::string why) {
  throw KernelError(origin_of(loc), std::move(why));
}

std::string shape_text(const Shape& s) {
  return fmt::format("[{}]", fmt::join(s, ", "));
}

int normalize_dim(int dim, int ndim, const Loc& loc, std::string_view what) {
  const int d = dim < 0 ? dim + ndim : dim;
  if (d < 0 || d >= ndim)
    fail(loc, fmt::format("{}: dim {} is out of range for a {}-dim tensor", what, dim, ndim));
  return d;
}

}  // namespace

std::int64_t Tensor::dim(int d) const {
  const int n = ndim();
  const int k = d < 0 ? d + n : d;
  if (k < 0 || k >= n) throw KernelError({}, fmt::format("dim {} of a {}-dim tensor", d, n));
  return shape_[static_cast<std::size_t>(k)];
}

std::int64_t Tensor::size() const {
  return std::accumulate(shape_.begin(), shape_.end(), std::int64_t{1}, std::multiplies<>());
}

std::string Tensor::name(Loc loc) const {
  if (!valid_) return "<invalid>";
  return Tracer::current(loc).storage_of(*this, loc).name;
}

Tensor Tensor::operator()(Index a) const {
  return index(std::array{a}, a.where);
}
Tensor Tensor::operator()(Index a, Index b) const {
  return index(std::array{a, b}, a.where);
}
Tensor Tensor::operator()(Index a, Index b, Index c) const {
  return index(std::array{a, b, c}, a.where);
}
Tensor Tensor::operator()(Index a, Index b, Index c, Index d) const {
  return index(std::array{a, b, c, d}, a.where);
}
Tensor Tensor::operator()(Index a, Index b, Index c, Index d, Index e) const {
  return index(std::array{a, b, c, d, e}, a.where);
}

Tensor Tensor::index(std::span<const Index> indices, Loc loc) const {
  if (!valid_) fail(loc, "indexing an invalid (default-constructed) tensor");
  require_direct("indexing", loc);
  if (indices.size() > shape_.size())
    fail(loc, fmt::format("{} indices for the {}-dim tensor '{}' {}", indices.size(), ndim(),
                          name(), shape_text(shape_)));
  const bool on_chip = is_on_chip(buffer_);
  Tensor out = *this;
  out.shape_.clear();
  out.strides_.clear();
  std::vector<bool> kept_from_int;  // per output dim: came from an integer index
  for (std::size_t d = 0; d < shape_.size(); ++d) {
    const std::int64_t size = shape_[d];
    const std::int64_t stride = strides_[d];
    if (d >= indices.size()) {
      out.shape_.push_back(size);
      out.strides_.push_back(stride);
      kept_from_int.push_back(false);
      continue;
    }
    if (const auto* i = std::get_if<std::int64_t>(&indices[d].value)) {
      const std::int64_t k = *i < 0 ? *i + size : *i;
      if (k < 0 || k >= size)
        fail(indices[d].where,
             fmt::format("index {} is out of range for dim {} (size {}) of '{}' {}", *i, d, size,
                         name(), shape_text(shape_)));
      if (on_chip && d == 0) {
        out.partition_offset_ += static_cast<std::uint32_t>(k);
        out.shape_.push_back(1);
        out.strides_.push_back(0);
        kept_from_int.push_back(false);
      } else {
        out.offset_ += k * stride;
        if (on_chip) {  // dropped unless the view would fall below 2 dims (fixed up below)
          out.shape_.push_back(1);
          out.strides_.push_back(stride);
          kept_from_int.push_back(true);
        }
      }
      continue;
    }
    const Slice s = std::get<Slice>(indices[d].value);
    if (s.step <= 0)
      fail(indices[d].where,
           fmt::format("slice step {} on dim {}: only positive steps are supported", s.step, d));
    std::int64_t start = s.start < 0 ? s.start + size : s.start;
    std::int64_t stop = s.stop == kEnd ? size : (s.stop < 0 ? s.stop + size : s.stop);
    if (start < 0 || start > size || stop < start || stop > size)
      fail(indices[d].where,
           fmt::format("slice {}:{} is out of range for dim {} (size {}) of '{}' {}", s.start,
                       s.stop == kEnd ? std::string() : std::to_string(s.stop), d, size, name(),
                       shape_text(shape_)));
    // Not (stop - start + step - 1) / step: that overflows for a step near 2^63. A slice of
    // one element keeps the dim's own stride (stride * step could overflow, and is unused).
    const std::int64_t count = stop == start ? 0 : (stop - start - 1) / s.step + 1;
    const std::int64_t step = count > 1 ? s.step : 1;
    if (on_chip && d == 0) {
      if (step != 1)
        fail(indices[d].where, "the partition dim of an on-chip tile cannot be strided");
      out.partition_offset_ += static_cast<std::uint32_t>(start);
      out.shape_.push_back(count);
      out.strides_.push_back(0);
    } else {
      out.offset_ += start * stride;
      out.shape_.push_back(count);
      out.strides_.push_back(stride * step);
    }
    kept_from_int.push_back(false);
  }
  if (on_chip) {
    // Drop integer-indexed free dims while the view keeps >= 2 dims (the last one stays).
    Shape shape;
    std::vector<std::int64_t> strides;
    std::size_t remaining = out.shape_.size();
    for (std::size_t d = 0; d < out.shape_.size(); ++d) {
      if (kept_from_int[d] && remaining > 2) {
        --remaining;
        continue;
      }
      shape.push_back(out.shape_[d]);
      strides.push_back(out.strides_[d]);
    }
    out.shape_ = std::move(shape);
    out.strides_ = std::move(strides);
  }
  return out;
}

Tensor Tensor::slice(int dim, std::int64_t start, std::int64_t stop, std::int64_t step,
                     Loc loc) const {
  const int d = normalize_dim(dim, ndim(), loc, "slice");
  std::vector<Index> idx;
  for (int k = 0; k < d; ++k) idx.emplace_back(Slice{}, loc);
  idx.emplace_back(Slice{start, stop, step}, loc);
  return index(idx, loc);
}

Tensor Tensor::permute(std::vector<int> dims, Loc loc) const {
  require_direct("permute", loc);
  if (dims.size() != shape_.size())
    fail(loc, fmt::format("permute needs {} dims, got {}", ndim(), dims.size()));
  std::vector<bool> seen(dims.size(), false);
  Tensor out = *this;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    const int d = normalize_dim(dims[k], ndim(), loc, "permute");
    if (seen[static_cast<std::size_t>(d)])
      fail(loc, fmt::format("permute: dim {} appears twice", d));
    seen[static_cast<std::size_t>(d)] = true;
    out.shape_[k] = shape_[static_cast<std::size_t>(d)];
    out.strides_[k] = strides_[static_cast<std::size_t>(d)];
  }
  if (is_on_chip(buffer_) && normalize_dim(dims[0], ndim(), loc, "permute") != 0)
    fail(loc, "permute must keep the partition dim first on an on-chip tile");
  return out;
}

Tensor Tensor::broadcast(int dim, std::int64_t size, Loc loc) const {
  require_direct("broadcast", loc);
  const int d = normalize_dim(dim, ndim(), loc, "broadcast");
  if (is_on_chip(buffer_) && d == 0) fail(loc, "broadcast cannot apply to the partition dim");
  if (shape_[static_cast<std::size_t>(d)] != 1)
    fail(loc, fmt::format("broadcast: dim {} has size {}, not 1", d,
                          shape_[static_cast<std::size_t>(d)]));
  if (size < 1) fail(loc, fmt::format("broadcast to size {}", size));
  Tensor out = *this;
  out.shape_[static_cast<std::size_t>(d)] = size;
  out.strides_[static_cast<std::size_t>(d)] = 0;
  return out;
}

Tensor Tensor::expand_dim(int dim, Loc loc) const {
  require_direct("expand_dim", loc);
  const int n = ndim() + 1;
  const int d = dim < 0 ? dim + n : dim;
  if (d < 0 || d >= n) fail(loc, fmt::format("expand_dim: dim {} out of range", dim));
  if (is_on_chip(buffer_) && d == 0) fail(loc, "expand_dim cannot insert before the partition dim");
  Tensor out = *this;
  out.shape_.insert(out.shape_.begin() + d, 1);
  out.strides_.insert(out.strides_.begin() + d, 0);
  return out;
}

Tensor Tensor::squeeze_dim(int dim, Loc loc) const {
  require_direct("squeeze_dim", loc);
  const int d = normalize_dim(dim, ndim(), loc, "squeeze_dim");
  if (shape_[static_cast<std::size_t>(d)] != 1)
    fail(loc, fmt::format("squeeze_dim: dim {} has size {}, not 1", d,
                          shape_[static_cast<std::size_t>(d)]));
  if (is_on_chip(buffer_) && (d == 0 || ndim() <= 2))
    fail(loc, "squeeze_dim would leave an on-chip tile without its partition dim or below 2 dims");
  Tensor out = *this;
  out.shape_.erase(out.shape_.begin() + d);
  out.strides_.erase(out.strides_.begin() + d);
  return out;
}

bool Tensor::is_contiguous() const {
  std::int64_t expect = 1;
  const std::size_t first = is_on_chip(buffer_) ? 1 : 0;
  for (std::size_t d = shape_.size(); d-- > first;) {
    if (shape_[d] == 1) continue;
    if (strides_[d] != expect) return false;
    expect *= shape_[d];
  }
  return true;
}

Tensor Tensor::reshape(Shape shape, Loc loc) const {
  require_direct("reshape", loc);
  if (!is_contiguous()) fail(loc, fmt::format("reshape of a non-contiguous view of '{}'", name()));
  const std::int64_t n =
      std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
  if (n != size())
    fail(loc, fmt::format("reshape {} -> {}: element counts differ", shape_text(shape_),
                          shape_text(shape)));
  if (is_on_chip(buffer_) && (shape.size() < 2 || shape[0] != shape_[0]))
    fail(loc, fmt::format("reshape {} -> {}: an on-chip tile keeps its partition dim",
                          shape_text(shape_), shape_text(shape)));
  Tensor out = *this;
  out.shape_ = shape;
  out.strides_.assign(shape.size(), 0);
  std::int64_t stride = 1;
  const std::size_t first = is_on_chip(buffer_) ? 1 : 0;
  for (std::size_t d = shape.size(); d-- > first;) {
    out.strides_[d] = stride;
    stride *= shape[d];
  }
  return out;
}

Tensor Tensor::reshape_dim(int dim, Shape sizes, Loc loc) const {
  require_direct("reshape_dim", loc);
  const int d = normalize_dim(dim, ndim(), loc, "reshape_dim");
  const auto at = static_cast<std::size_t>(d);
  if (sizes.empty()) fail(loc, "reshape_dim: no sizes");
  std::int64_t known = 1;
  int inferred = -1;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    if (sizes[k] == -1 && inferred < 0) {
      inferred = static_cast<int>(k);
    } else if (sizes[k] < 1) {
      fail(loc, fmt::format("reshape_dim: size {} in {} (one -1 at most, others >= 1)", sizes[k],
                            shape_text(sizes)));
    } else if (__builtin_mul_overflow(known, sizes[k], &known) || known > shape_[at]) {
      fail(loc, fmt::format("reshape_dim: {} has more elements than dim {} ({})", shape_text(sizes),
                            d, shape_[at]));
    }
  }
  if (inferred >= 0) {
    if (shape_[at] % known != 0)
      fail(loc,
           fmt::format("reshape_dim: {} does not divide dim {} of size {}", known, d, shape_[at]));
    sizes[static_cast<std::size_t>(inferred)] = shape_[at] / known;
    known = shape_[at];
  }
  if (known != shape_[at])
    fail(loc, fmt::format("reshape_dim: {} has {} elements; dim {} has {}", shape_text(sizes),
                          known, d, shape_[at]));
  if (is_on_chip(buffer_) && d == 0 && sizes.size() != 1)
    fail(loc, "reshape_dim cannot split the partition dim of an on-chip tile");
  Tensor out = *this;
  out.shape_.erase(out.shape_.begin() + d);
  out.strides_.erase(out.strides_.begin() + d);
  std::int64_t stride = strides_[at];
  for (std::size_t k = sizes.size(); k-- > 0;) {
    out.shape_.insert(out.shape_.begin() + d, sizes[k]);
    out.strides_.insert(out.strides_.begin() + d, stride);
    stride *= sizes[k];
  }
  return out;
}

Tensor Tensor::flatten_dims(int first, int last, Loc loc) const {
  require_direct("flatten_dims", loc);
  const int a = normalize_dim(first, ndim(), loc, "flatten_dims");
  const int b = normalize_dim(last, ndim(), loc, "flatten_dims");
  if (a > b)
    fail(loc, fmt::format("flatten_dims({}, {}): the first dim comes after the last", a, b));
  if (is_on_chip(buffer_) && a == 0 && b > 0)
    fail(loc, "flatten_dims cannot merge the partition dim of an on-chip tile");
  // Innermost first: each dim of size > 1 must step over all the dims inside it.
  std::int64_t size = 1, stride = 0, span = 0;
  for (int k = b; k >= a; --k) {
    const auto at = static_cast<std::size_t>(k);
    size *= shape_[at];
    if (shape_[at] == 1) continue;
    if (span == 0) {
      stride = strides_[at];
    } else if (strides_[at] != stride * span) {
      fail(loc, fmt::format("flatten_dims({}, {}): dim {} (stride {}) does not step over the dims "
                            "inside it ({} elements of stride {}): not contiguous in memory",
                            a, b, k, strides_[at], span, stride));
    }
    span = span == 0 ? shape_[at] : span * shape_[at];
  }
  Tensor out = *this;
  const auto lo = static_cast<std::size_t>(a);
  out.shape_[lo] = size;
  out.strides_[lo] = span == 0 ? 1 : stride;
  out.shape_.erase(out.shape_.begin() + a + 1, out.shape_.begin() + b + 1);
  out.strides_.erase(out.strides_.begin() + a + 1, out.strides_.begin() + b + 1);
  return out;
}

std::vector<std::array<std::int64_t, 2>> Tensor::pattern_pairs(Loc loc) const {
  const Storage& s = Tracer::current(loc).storage_of(*this, loc);
  std::vector<std::array<std::int64_t, 2>> pairs;
  for (std::size_t d = 0; d < shape_.size(); ++d) pairs.push_back({strides_[d], shape_[d]});
  if (is_on_chip(buffer_) && !pairs.empty())
    pairs[0][0] = static_cast<std::int64_t>(s.bytes / numerics::storage_bytes(dtype_));
  return pairs;
}

Tensor Tensor::view(DType dtype, Loc loc) const {
  require_direct("view(dtype)", loc);
  const std::int64_t from = static_cast<std::int64_t>(numerics::storage_bytes(dtype_));
  const std::int64_t to = static_cast<std::int64_t>(numerics::storage_bytes(dtype));
  if (shape_.empty() || strides_.back() != 1) fail(loc, "view(dtype) needs a unit-stride last dim");
  const std::int64_t last_bytes = shape_.back() * from;
  if (last_bytes % to != 0 || (offset_ * from) % to != 0)
    fail(loc, fmt::format(
                  "view as {}: the last dim ({} bytes) or the offset is not a multiple of {} bytes",
                  numerics::name(dtype), last_bytes, to));
  Tensor out = *this;
  out.dtype_ = dtype;
  out.offset_ = offset_ * from / to;
  out.shape_.back() = last_bytes / to;
  const std::size_t first = is_on_chip(buffer_) ? 1 : 0;
  for (std::size_t d = first; d + 1 < shape_.size(); ++d) {
    if ((strides_[d] * from) % to != 0)
      fail(loc, "view(dtype): a stride is not a whole number of new elements");
    out.strides_[d] = strides_[d] * from / to;
  }
  return out;
}

Tensor Tensor::pattern(const std::vector<std::array<std::int64_t, 2>>& pattern, std::int64_t offset,
                       std::optional<DType> dtype, Loc loc) const {
  if (!valid_) fail(loc, ".ap() of an invalid (default-constructed) tensor");
  require_direct(".ap()", loc);
  if (dyn_reg_.present())
    fail(loc, fmt::format(".ap() of a view of '{}' with a register offset: the pattern would drop "
                          "the offset (give the pattern first, then the offset)",
                          name()));
  Tracer& tracer = Tracer::current(loc);
  const Storage& s = tracer.storage_of(*this, loc);
  const DType type = dtype.value_or(s.dtype);
  const auto elem = static_cast<std::int64_t>(numerics::storage_bytes(type));
  const bool on_chip = is_on_chip(s.buffer);
  const auto bytes = static_cast<std::int64_t>(s.bytes);
  if (bytes % elem != 0)
    fail(loc, fmt::format(".ap(dtype={}): '{}' holds {} bytes{}, not a whole number of {}",
                          numerics::name(type), s.name, bytes, on_chip ? " per partition" : "",
                          numerics::name(type)));
  const std::int64_t extent = bytes / elem;  // elements per partition (on-chip) or in all
  const std::size_t first_free = on_chip ? 1 : 0;
  if (pattern.size() < first_free + 1 || pattern.size() > first_free + 5)
    fail(loc, fmt::format(".ap(): a pattern of '{}' has {} to {} [step, count] pairs, not {}",
                          s.name, first_free + 1, first_free + 5, pattern.size()));
  if (offset < 0) fail(loc, fmt::format(".ap(): offset {} is negative", offset));
  Tensor out = tracer.view_of(s.id);
  out.dtype_ = type;
  out.shape_.clear();
  out.strides_.clear();
  for (const auto& [step, count] : pattern) {
    if (count < 1)
      fail(loc, fmt::format(".ap(): a count of {} (every count is at least 1)", count));
    out.shape_.push_back(count);
    out.strides_.push_back(step);
  }
  std::int64_t start = offset;
  if (on_chip) {
    if (pattern[0][0] != extent)
      fail(loc, fmt::format(".ap(): the first pair of an on-chip pattern is [elements per "
                            "partition, partitions] = [{}, ...] for '{}', not [{}, {}]",
                            extent, s.name, pattern[0][0], pattern[0][1]));
    const std::int64_t first = offset / extent;  // checked in 64 bits before narrowing
    if (first > s.partitions || pattern[0][1] > static_cast<std::int64_t>(s.partitions) - first)
      fail(loc, fmt::format(".ap(): partitions [{}, {}) of '{}', which has {}", first,
                            first + pattern[0][1], s.name, s.partitions));
    out.partition_offset_ = static_cast<std::uint32_t>(first);
    start = offset % extent;
    out.strides_[0] = 0;
  }
  // The elements reached, from the lowest to the highest, must lie inside the storage.
  std::int64_t lowest = start, highest = start;
  for (std::size_t d = first_free; d < pattern.size(); ++d) {
    std::int64_t reach = 0;
    std::int64_t& end = pattern[d][0] < 0 ? lowest : highest;
    if (__builtin_mul_overflow(pattern[d][0], pattern[d][1] - 1, &reach) ||
        __builtin_add_overflow(end, reach, &end))
      fail(loc,
           fmt::format(".ap(): the pattern of '{}' reaches beyond 64-bit element offsets", s.name));
  }
  if (lowest < 0 || highest >= extent)
    fail(loc, fmt::format(".ap(): the pattern reaches elements [{}, {}] of '{}', which has {}{} "
                          "of {}",
                          lowest, highest, s.name, extent, on_chip ? " per partition" : "",
                          numerics::name(type)));
  out.offset_ = start;
  return out;
}

struct Tensor::Indirection {
  Tensor index;
  std::int64_t row_step = 0;
  std::int64_t max_rows = 0;  // 0: no bound but the storage's
};

std::int64_t Tensor::storage_offset(Loc loc) const {
  const Storage& s = Tracer::current(loc).storage_of(*this, loc);
  if (!is_on_chip(buffer_)) return offset_;
  const auto per_partition = static_cast<std::int64_t>(s.bytes / numerics::storage_bytes(dtype_));
  return std::int64_t{partition_offset_} * per_partition + offset_;
}

void Tensor::require_direct(std::string_view what, const Loc& loc) const {
  if (indirect_)
    fail(loc, fmt::format("{} of an indirect view of '{}': a view with a vector offset cannot "
                          "be viewed further (take the view first, then .ap(vector_offset=))",
                          what, name()));
}

Tensor Tensor::rows_at(const Tensor& index, std::int64_t row_step, std::int64_t max_rows,
                       Loc loc) const {
  if (!valid_ || !index.valid_) fail(loc, "an indirect view of an invalid tensor or index");
  require_direct("a vector offset", loc);
  index.require_direct("an index", loc);
  if (is_on_chip(buffer_))
    fail(loc,
         fmt::format("a vector offset indexes rows of an HBM tensor; '{}' is on chip", name()));
  if (ndim() < 2)
    fail(loc, fmt::format("a vector offset needs a row dim and a free dim; the view of '{}' has "
                          "{} dim",
                          name(), ndim()));
  if (dyn_reg_.present()) fail(loc, "vector_offset and scalar_offset are mutually exclusive");
  if (index.buffer_ != Buffer::kSbuf)
    fail(loc, fmt::format("the vector offset '{}' must be an SBUF tensor", index.name()));
  if (index.dtype_ != DType::kUInt32 && index.dtype_ != DType::kInt32)
    fail(loc, fmt::format("the vector offset '{}' is {}; row indices are uint32 or int32",
                          index.name(), numerics::name(index.dtype_)));
  if (row_step < 1) fail(loc, fmt::format("a row step of {} elements (at least 1)", row_step));
  if (max_rows < 0) fail(loc, fmt::format("a bound of {} rows", max_rows));
  Tensor out = *this;
  out.shape_[0] = index.size();
  out.strides_[0] = row_step;
  out.indirect_ = std::make_shared<const Indirection>(Indirection{index, row_step, max_rows});
  return out;
}

Tensor::IndirectOperands Tensor::indirect_operands(Loc loc) const {
  if (!indirect_) fail(loc, "indirect_operands() of a view without a vector offset");
  const Storage& s = Tracer::current(loc).storage_of(*this, loc);
  const auto extent =
      static_cast<std::int64_t>(s.bytes / numerics::storage_bytes(dtype_));  // HBM: all elements
  // The highest element one row reaches past its start; the rows that fit whole are the ones
  // an index may name.
  std::int64_t reach = 0;
  for (std::size_t d = 1; d < shape_.size(); ++d)
    reach += std::max<std::int64_t>(0, strides_[d] * (shape_[d] - 1));
  const std::int64_t room = extent - 1 - offset_ - reach;
  if (room < 0) fail(loc, fmt::format("no whole row of the indirect view fits in '{}'", name()));
  std::int64_t rows = room / indirect_->row_step + 1;
  if (indirect_->max_rows > 0) rows = std::min(rows, indirect_->max_rows);
  if (rows > std::numeric_limits<std::uint32_t>::max())
    fail(loc, fmt::format("'{}' has {} rows of the indirect view; an index reaches at most 2^32",
                          name(), rows));
  Tensor table = *this;
  table.indirect_.reset();
  table.shape_[0] = rows;
  table.strides_[0] = indirect_->row_step;
  return {table.lower(true, loc), indirect_->index.ap(loc)};
}

isa::AccessPattern Tensor::ap(Loc loc) const {
  return lower(true, loc);
}
isa::AccessPattern Tensor::ap_exact(Loc loc) const {
  return lower(false, loc);
}

isa::AccessPattern Tensor::lower(bool merge, Loc loc) const {
  if (!valid_) fail(loc, "an operand is an invalid (default-constructed) tensor");
  if (indirect_)
    fail(loc, fmt::format("an indirect view of '{}' (.ap(vector_offset=)) is an operand of "
                          "dma_copy and dma_compute only",
                          name()));
  (void)Tracer::current(loc).storage_of(*this, loc);
  isa::AccessPattern ap;
  ap.memory = memory_of(buffer_);
  ap.dtype = dtype_;
  const std::int64_t elem = static_cast<std::int64_t>(numerics::storage_bytes(dtype_));
  std::size_t first_free = 1;
  if (is_on_chip(buffer_)) {
    ap.start_partition = partition_offset_;
    ap.partitions = static_cast<std::uint32_t>(shape_[0]);
  } else if (shape_.size() >= 2) {
    ap.partitions = static_cast<std::uint32_t>(shape_[0]);
    ap.partition_step = shape_[0] == 1 ? 0 : strides_[0];
  } else {
    ap.partitions = 1;
    first_free = 0;
  }
  ap.offset = storage_window(storage_) + static_cast<std::uint64_t>(offset_ * elem);
  // Free dims, dropping size-1 dims and merging dims that walk on from the inner one.
  std::vector<isa::Dim> dims;
  for (std::size_t d = first_free; d < shape_.size(); ++d) {
    if (shape_[d] == 0) fail(loc, fmt::format("'{}' has an empty dim", name()));
    if (shape_[d] == 1 && merge) continue;
    dims.push_back({strides_[d], static_cast<std::uint32_t>(shape_[d])});
  }
  std::vector<isa::Dim> merged;
  for (std::size_t k = dims.size(); k-- > 0;) {
    if (merge && !merged.empty() && dims[k].step == merged.back().step * merged.back().count &&
        merged.back().step != 0) {
      merged.back().count *= dims[k].count;
      merged.back().step = merged.back().step;  // inner step stays
      continue;
    }
    merged.push_back(dims[k]);
  }
  std::reverse(merged.begin(), merged.end());
  if (merged.empty()) merged.push_back({1, 1});
  if (merged.size() > isa::kMaxFreeDims)
    fail(loc,
         fmt::format("a view of '{}' {} needs {} free dims after merging; an access pattern has at "
                     "most {}",
                     name(), shape_text(shape_), merged.size(), isa::kMaxFreeDims));
  ap.num_dims = static_cast<std::uint8_t>(merged.size());
  for (std::size_t k = 0; k < merged.size(); ++k) ap.dims[k] = merged[k];
  ap.dyn_reg = dyn_reg_;
  ap.dyn_scale = dyn_bytes_;
  return ap;
}

}  // namespace trnsim::kernel
