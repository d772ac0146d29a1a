// Exact overlap of strided byte sets: the bytes an affine access pattern touches, and whether
// two of them share a byte. Used by the compiler's dependency pass and by the simulator's
// hazard detector, so that both agree on one relation (docs/compiler.md, "Dependencies").
// Header-only; the bottom of the layer stack (no isa types: callers convert their patterns).
//
// A ByteSet is { base + sum_k stride_k * i_k + j : 0 <= i_k < count_k, 0 <= j < width }: runs
// of `width` bytes at the points of an affine lattice. make() canonicalises it exactly:
//   * steps are made positive (a negative step walks the same points backwards), count-1 and
//     step-0 (broadcast) dims dropped;
//   * a dim whose stride is at most the run width is folded into the width (its runs touch or
//     overlap, so their union is one longer run);
//   * two dims with equal strides become one (i * s + j * s = k * s, k < n1 + n2 - 1), and a
//     dim whose stride is q times a smaller one with count >= q is folded into it (the
//     smaller dim fills the gaps);
//   * the rest is kept sorted by stride, every stride larger than the width.
// A row-major block [r0:r0+R, c0:c0+C] of an [M, N] tensor becomes one dim (N * e, R) with
// width C * e, whatever the view's dims were.
//
// overlaps(a, b): bounding ranges first (most pairs are decided there); otherwise the
// question "is there x in a, y in b with x - y in (-width_a, width_b)" is asked of the
// difference set a - b, itself a ByteSet (the dims of a and the negated dims of b, canonical
// again: the column blocks out[:, 0:128] and out[:, 128:256] give one dim (row stride,
// 2M - 1)), by a search over its dims from the largest stride down. For canonical sets each
// level has at most ceil(inner extent / stride) candidates, which is 1 or 2 for nested
// patterns (each stride beyond the extent of the dims inside it), and a gcd test rejects
// residues no point can reach. The search is exact; it is bounded by kSearchBudget visited
// nodes, after which it answers "overlap" (conservative). That happens only for interleaved
// patterns whose strides are neither nested nor multiples of each other, with many
// candidates per level (none of the library kernels), and costs at most a needless
// dependency there. Sets with more than kMaxDims dims after canonicalisation, or whose
// arithmetic leaves int64, are replaced by their bounding range and marked approximate.
//
// covers(outer, inner): true only when every byte of `inner` is certainly in `outer` (used to
// forget accesses a later one subsumes; "false" only keeps an access longer): `outer` a single
// run containing inner's range, or the same outer stride on both sides with inner's rows
// inside outer's rows, recursively. Never true for an approximate `outer`.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <span>

namespace trnsim::util {

struct StridedDim {
  std::int64_t stride = 0;  // bytes; any sign
  std::int64_t count = 1;   // >= 0
};

namespace strided_detail {

__extension__ typedef __int128 Wide;

constexpr int kWorkDims = 12;  // two sets of kMaxDims (the difference set)

struct WDim {
  Wide stride = 0, count = 1;
};

// A set under construction in wide arithmetic.
struct Work {
  Wide base = 0, width = 0;
  int n = 0;
  std::array<WDim, kWorkDims> dims{};
  bool empty = false;
  bool overflow = false;  // more than kWorkDims dims were added

  void add(Wide stride, Wide count) {
    if (count <= 0) {
      empty = true;
      return;
    }
    if (count == 1 || stride == 0) return;
    if (stride < 0) {
      base += stride * (count - 1);
      stride = -stride;
    }
    if (n == kWorkDims) {
      overflow = true;
      return;
    }
    dims[n++] = {stride, count};
  }

  Wide extent() const {  // last byte + 1 - base
    Wide e = width;
    for (int k = 0; k < n; ++k) e += dims[k].stride * (dims[k].count - 1);
    return e;
  }

  void erase(int k) {
    for (int j = k; j + 1 < n; ++j) dims[j] = dims[j + 1];
    --n;
  }

  // The exact merges of the header comment, until none applies.
  void canonicalise() {
    for (int i = 1; i < n; ++i)  // insertion sort by stride (n <= kWorkDims)
      for (int j = i; j > 0 && dims[j].stride < dims[j - 1].stride; --j)
        std::swap(dims[j], dims[j - 1]);
    bool changed = true;
    while (changed) {
      changed = false;
      if (n > 0 && dims[0].stride <= width) {
        width += dims[0].stride * (dims[0].count - 1);
        erase(0);
        changed = true;
        continue;
      }
      for (int i = 0; i < n && !changed; ++i)
        for (int j = i + 1; j < n && !changed; ++j) {
          const Wide q = dims[j].stride / dims[i].stride;
          if (dims[j].stride % dims[i].stride != 0 || dims[i].count < q) continue;
          dims[i].count += q * (dims[j].count - 1);
          erase(j);
          changed = true;
        }
    }
  }
};

inline Wide gcd(Wide a, Wide b) {  // a, b >= 0 (std::gcd rejects __int128 in strict C++20)
  while (b != 0) {
    const Wide r = a % b;
    a = b;
    b = r;
  }
  return a;
}

inline Wide floor_div(Wide a, Wide b) {  // b > 0
  const Wide q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

}  // namespace strided_detail

class ByteSet {
 public:
  static constexpr int kMaxDims = 6;          // 4 free dims + the HBM partition dim + 1
  static constexpr int kSearchBudget = 1024;  // nodes per overlap query (then "overlap")

  ByteSet() = default;

  // [lo, hi) (empty when hi <= lo).
  static ByteSet interval(std::int64_t lo, std::int64_t hi) {
    ByteSet s;
    s.base_ = lo;
    s.hi_ = hi > lo ? hi : lo;
    // (A range wider than int64, only from saturated absurd patterns, keeps the widest run.)
    if (hi > lo && __builtin_sub_overflow(hi, lo, &s.width_))
      s.width_ = std::numeric_limits<std::int64_t>::max();
    return s;
  }

  // Runs of `width` bytes (an element) at base + sum stride_k * i_k.
  static ByteSet make(std::int64_t base, std::int64_t width, std::span<const StridedDim> dims) {
    strided_detail::Work w;
    w.base = base;
    w.width = width;
    if (width <= 0) return interval(base, base);
    if (dims.size() > static_cast<std::size_t>(strided_detail::kWorkDims))
      return approximate_of(base, width, dims);
    for (const StridedDim& d : dims) w.add(d.stride, d.count);
    if (w.empty) return interval(base, base);
    if (w.overflow) return approximate_of(base, width, dims);
    w.canonicalise();
    return from_work(w, base, width, dims);
  }

  bool empty() const { return width_ == 0; }
  std::int64_t lo() const { return base_; }
  std::int64_t hi() const { return hi_; }
  std::int64_t width() const { return width_; }
  int num_dims() const { return n_; }
  const StridedDim& dim(int k) const { return dims_[static_cast<std::size_t>(k)]; }
  bool is_run() const { return n_ == 0; }            // one contiguous range
  bool approximate() const { return approximate_; }  // the bounding range of the real set

  // Whether `byte` is in the set (approximate sets: in the bounding range).
  bool contains(std::int64_t byte) const {
    if (empty() || byte < base_ || byte >= hi_) return false;
    if (n_ == 0) return true;
    strided_detail::Work w = work();
    int budget = kSearchBudget;
    return hit(w, w.n, byte, budget);
  }

  friend bool overlaps(const ByteSet& a, const ByteSet& b) {
    if (a.empty() || b.empty() || a.hi_ <= b.lo() || b.hi_ <= a.lo()) return false;
    if (a.n_ == 0 && b.n_ == 0) return true;  // two runs whose ranges meet
    if (a.n_ == 0 || b.n_ == 0) {
      // A run holding the set's first or last byte (both are in the set): cheap and common.
      const ByteSet& run = a.n_ == 0 ? a : b;
      const ByteSet& set = a.n_ == 0 ? b : a;
      if (run.lo() <= set.lo() || set.hi_ <= run.hi_) return true;
    }
    strided_detail::Work d;
    d.base = static_cast<strided_detail::Wide>(a.base_) - b.base_;
    d.width = static_cast<strided_detail::Wide>(a.width_) + b.width_ - 1;
    for (int k = 0; k < a.n_; ++k) d.add(a.dims_[k].stride, a.dims_[k].count);
    for (int k = 0; k < b.n_; ++k)
      d.add(-static_cast<strided_detail::Wide>(b.dims_[k].stride), b.dims_[k].count);
    d.canonicalise();
    int budget = kSearchBudget;
    return hit(d, d.n, static_cast<strided_detail::Wide>(b.width_) - 1, budget);
  }

  // True only if every byte of `inner` is in `outer` (see the header comment).
  friend bool covers(const ByteSet& outer, const ByteSet& inner) {
    if (inner.empty()) return true;
    if (outer.empty() || outer.approximate_) return false;
    return covers_rec(outer.work(), outer.n_, inner.work(), inner.n_);
  }

 private:
  using Wide = strided_detail::Wide;
  using Work = strided_detail::Work;

  static ByteSet approximate_of(std::int64_t base, std::int64_t width,
                                std::span<const StridedDim> dims) {
    Wide lo = base, hi = static_cast<Wide>(base) + width;
    for (const StridedDim& d : dims) {
      if (d.count <= 0) return interval(base, base);
      const Wide reach = static_cast<Wide>(d.stride) * (d.count - 1);
      (reach < 0 ? lo : hi) += reach;
    }
    constexpr Wide kMin = std::numeric_limits<std::int64_t>::min();
    constexpr Wide kMax = std::numeric_limits<std::int64_t>::max();
    ByteSet s = interval(static_cast<std::int64_t>(std::clamp(lo, kMin, kMax)),
                         static_cast<std::int64_t>(std::clamp(hi, kMin, kMax)));
    s.approximate_ = true;
    return s;
  }

  static ByteSet from_work(const Work& w, std::int64_t base, std::int64_t width,
                           std::span<const StridedDim> dims) {
    constexpr Wide kMin = std::numeric_limits<std::int64_t>::min();
    constexpr Wide kMax = std::numeric_limits<std::int64_t>::max();
    const Wide hi = w.base + w.extent();
    if (w.n > kMaxDims || w.base < kMin || hi > kMax || w.width > kMax)
      return approximate_of(base, width, dims);
    ByteSet s;
    s.base_ = static_cast<std::int64_t>(w.base);
    s.width_ = static_cast<std::int64_t>(w.width);
    s.hi_ = static_cast<std::int64_t>(hi);
    s.n_ = w.n;
    for (int k = 0; k < w.n; ++k)
      s.dims_[static_cast<std::size_t>(k)] = {static_cast<std::int64_t>(w.dims[k].stride),
                                              static_cast<std::int64_t>(w.dims[k].count)};
    return s;
  }

  Work work() const {
    Work w;
    w.base = base_;
    w.width = width_;
    w.n = n_;
    for (int k = 0; k < n_; ++k)
      w.dims[k] = {dims_[static_cast<std::size_t>(k)].stride,
                   dims_[static_cast<std::size_t>(k)].count};
    return w;
  }

  // Is point t in { base + sum_{k < n} stride_k i_k + [0, width) } (dims ascending)?
  static bool hit(const Work& w, int n, Wide t, int& budget) {
    return hit_at(w, n, w.base, t, budget);
  }
  static bool hit_at(const Work& w, int n, Wide base, Wide t, int& budget) {
    if (--budget < 0) return true;  // too many candidates: conservative
    const Wide rel = t - base;
    if (rel < 0) return false;
    if (n == 0) return rel < w.width;
    // Extent and gcd of the dims inside the outermost one.
    Wide inner = w.width, g = 0;
    for (int k = 0; k < n - 1; ++k) {
      inner += w.dims[k].stride * (w.dims[k].count - 1);
      g = strided_detail::gcd(g, w.dims[k].stride);
    }
    const Wide s = w.dims[n - 1].stride, c = w.dims[n - 1].count;
    if (rel >= s * (c - 1) + inner) return false;
    g = strided_detail::gcd(g, s);
    if (w.width < g && rel % g >= w.width) return false;  // no point reaches this residue
    // Candidates: s * i <= rel < s * i + inner.
    const Wide i_hi = std::min(c - 1, rel / s);
    const Wide i_lo = rel - inner < 0 ? 0 : strided_detail::floor_div(rel - inner, s) + 1;
    for (Wide i = i_hi; i >= i_lo; --i) {
      if (hit_at(w, n - 1, base + s * i, t, budget)) return true;
      if (budget < 0) return true;
    }
    return false;
  }

  // Sufficient test: inner's rows lie inside outer's rows (same outermost stride), recursively.
  static bool covers_rec(const Work& o, int on, const Work& in, int inn) {
    const Wide o_hi = o.base + extent_of(o, on), in_hi = in.base + extent_of(in, inn);
    if (in.base < o.base || in_hi > o_hi) return false;
    if (on == 0) return true;
    const Wide s = o.dims[on - 1].stride, c = o.dims[on - 1].count;
    if (extent_of(o, on - 1) > s) return false;  // outer's rows interleave: not handled
    const Wide off = in.base - o.base;
    const Wide q = off / s, t = off - q * s;
    Work o_row = o, in_row = in;
    o_row.base = 0;
    in_row.base = t;
    if (inn > 0 && in.dims[inn - 1].stride == s) {
      if (q + in.dims[inn - 1].count > c) return false;
      return covers_rec(o_row, on - 1, in_row, inn - 1);
    }
    return covers_rec(o_row, on - 1, in_row, inn);  // inner within one row of outer (or false)
  }

  static Wide extent_of(const Work& w, int n) {
    Wide e = w.width;
    for (int k = 0; k < n; ++k) e += w.dims[k].stride * (w.dims[k].count - 1);
    return e;
  }

  std::int64_t base_ = 0, width_ = 0, hi_ = 0;
  int n_ = 0;
  bool approximate_ = false;
  std::array<StridedDim, kMaxDims> dims_{};
};

// Visible to qualified lookup (util::overlaps) too, not only through the argument types.
bool overlaps(const ByteSet& a, const ByteSet& b);
bool covers(const ByteSet& outer, const ByteSet& inner);

}  // namespace trnsim::util
