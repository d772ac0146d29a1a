// util::ByteSet (src/util/strided_overlap.h): exact overlap of strided access patterns,
// checked against brute-force enumeration of small random patterns.
#include "util/strided_overlap.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

namespace trnsim::util {
namespace {

struct Pattern {
  std::int64_t base = 0, width = 1;
  std::vector<StridedDim> dims;

  ByteSet set() const { return ByteSet::make(base, width, dims); }
  std::set<std::int64_t> bytes() const {
    std::set<std::int64_t> out;
    std::vector<std::int64_t> idx(dims.size(), 0);
    for (const StridedDim& d : dims)
      if (d.count == 0) return out;
    while (true) {
      std::int64_t p = base;
      for (std::size_t k = 0; k < dims.size(); ++k) p += dims[k].stride * idx[k];
      for (std::int64_t j = 0; j < width; ++j) out.insert(p + j);
      std::size_t k = 0;
      for (; k < dims.size(); ++k) {
        if (++idx[k] < dims[k].count) break;
        idx[k] = 0;
      }
      if (k == dims.size()) return out;
    }
  }
};

bool intersect(const std::set<std::int64_t>& a, const std::set<std::int64_t>& b) {
  for (std::int64_t x : a)
    if (b.count(x)) return true;
  return false;
}
bool subset(const std::set<std::int64_t>& inner, const std::set<std::int64_t>& outer) {
  for (std::int64_t x : inner)
    if (!outer.count(x)) return false;
  return true;
}

// Row-major [rows, cols] block of a tensor with row length n (bytes per element e).
Pattern block(std::int64_t n, std::int64_t e, std::int64_t r0, std::int64_t rows, std::int64_t c0,
              std::int64_t cols) {
  return {(r0 * n + c0) * e, e, {{n * e, rows}, {e, cols}}};
}

TEST(StridedOverlap, CanonicalFormOfABlock) {
  const ByteSet s = block(256, 2, 3, 100, 128, 128).set();
  ASSERT_EQ(s.num_dims(), 1);
  EXPECT_EQ(s.dim(0).stride, 512);
  EXPECT_EQ(s.dim(0).count, 100);
  EXPECT_EQ(s.width(), 256);
  EXPECT_EQ(s.lo(), (3 * 256 + 128) * 2);
  // Full rows are one run.
  EXPECT_TRUE(block(256, 2, 3, 100, 0, 256).set().is_run());
  // Negative and broadcast steps.
  const ByteSet r = ByteSet::make(100, 4, std::vector<StridedDim>{{-4, 10}, {0, 7}});
  EXPECT_TRUE(r.is_run());
  EXPECT_EQ(r.lo(), 64);
  EXPECT_EQ(r.hi(), 104);
}

TEST(StridedOverlap, DisjointColumnBlocksAndOverlappingOnes) {
  const std::int64_t n = 4096, e = 4;
  const ByteSet left = block(n, e, 0, 4096, 0, 512).set();
  const ByteSet right = block(n, e, 0, 4096, 512, 512).set();
  EXPECT_LT(left.lo(), right.hi());  // bounding ranges overlap...
  EXPECT_LT(right.lo(), left.hi());
  EXPECT_FALSE(overlaps(left, right));  // ...the bytes do not
  EXPECT_FALSE(overlaps(right, left));
  EXPECT_TRUE(overlaps(left, block(n, e, 0, 4096, 511, 2).set()));
  EXPECT_TRUE(overlaps(left, block(n, e, 4095, 1, 0, 1).set()));
  EXPECT_FALSE(overlaps(left, block(n, e, 0, 4096, 4095, 1).set()));
  // Row blocks of different column blocks, and a column against a row.
  EXPECT_FALSE(overlaps(block(n, e, 0, 128, 0, 512).set(), block(n, e, 128, 128, 0, 512).set()));
  EXPECT_TRUE(overlaps(block(n, e, 0, 4096, 7, 1).set(), block(n, e, 300, 1, 0, 4096).set()));
  // Every other row against the rows in between.
  const ByteSet even = ByteSet::make(0, 64, std::vector<StridedDim>{{2 * 1024, 50}});
  const ByteSet odd = ByteSet::make(1024, 64, std::vector<StridedDim>{{2 * 1024, 50}});
  EXPECT_FALSE(overlaps(even, odd));
  EXPECT_TRUE(overlaps(even, ByteSet::make(2 * 1024 * 49 + 63, 1, {})));
}

TEST(StridedOverlap, Covers) {
  const std::int64_t n = 1024, e = 2;
  const ByteSet tile = block(n, e, 128, 128, 512, 512).set();
  EXPECT_TRUE(covers(tile, block(n, e, 130, 5, 600, 10).set()));
  EXPECT_TRUE(covers(tile, tile));
  EXPECT_FALSE(covers(tile, block(n, e, 130, 5, 1000, 30).set()));  // past the columns
  EXPECT_FALSE(covers(tile, block(n, e, 250, 10, 600, 10).set()));  // past the rows
  EXPECT_FALSE(covers(block(n, e, 0, 4, 0, 8).set(), block(n, e, 0, 4, 8, 8).set()));
  EXPECT_TRUE(covers(ByteSet::interval(0, 1 << 20), tile));
  EXPECT_TRUE(covers(tile, ByteSet::interval(0, 0)));
}

TEST(StridedOverlap, LargeStridesStayExact) {
  // Offsets near 2^62 and counts up to 2^20 do not overflow.
  const std::int64_t big = std::int64_t{1} << 40;
  const ByteSet a =
      ByteSet::make(std::int64_t{1} << 61, 8, std::vector<StridedDim>{{big, 1 << 20}});
  const ByteSet b =
      ByteSet::make((std::int64_t{1} << 61) + 8, 8, std::vector<StridedDim>{{big, 1 << 20}});
  EXPECT_FALSE(overlaps(a, b));
  EXPECT_TRUE(overlaps(a, ByteSet::make((std::int64_t{1} << 61) + big * 77 + 3, 1, {})));
  // Leaving int64 makes the set approximate (its bounding range): overlap stays conservative.
  const ByteSet huge =
      ByteSet::make(0, 1, std::vector<StridedDim>{{std::int64_t{1} << 62, 4}, {3, 2}});
  EXPECT_TRUE(huge.approximate());
  EXPECT_TRUE(overlaps(huge, ByteSet::make(5, 1, {})));
  EXPECT_FALSE(covers(huge, ByteSet::make(5, 1, {})));
}

// Random small patterns: overlaps() equals brute force, covers() implies the subset relation
// (and holds for every sub-block of a block), contains() matches every byte.
TEST(StridedOverlap, RandomPatternsAgainstBruteForce) {
  std::mt19937 rng(12345);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto random_pattern = [&]() {
    Pattern p;
    p.width = std::vector<std::int64_t>{1, 2, 4}[static_cast<std::size_t>(pick(0, 2))];
    p.base = pick(0, 40);
    const int nd = pick(0, 4);
    for (int k = 0; k < nd; ++k) {
      StridedDim d;
      const int kind = pick(0, 9);
      if (kind == 0)
        d.stride = 0;
      else if (kind <= 6)
        d.stride = p.width * pick(1, 12);  // element multiples (typical)
      else
        d.stride = pick(-20, 20);  // anything
      d.count = pick(0, 9) == 0 ? pick(0, 1) : pick(1, 6);
      p.dims.push_back(d);
    }
    // Keep the base non-negative after negative steps (not required, just readable).
    return p;
  };
  int overlapping = 0, disjoint_in_range = 0, covered = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    const Pattern pa = random_pattern(), pb = random_pattern();
    const std::set<std::int64_t> a = pa.bytes(), b = pb.bytes();
    const ByteSet sa = pa.set(), sb = pb.set();
    ASSERT_FALSE(sa.approximate());
    // Canonical sets describe exactly the same bytes.
    ASSERT_EQ(sa.empty(), a.empty()) << iter;
    if (!a.empty()) {
      ASSERT_EQ(sa.lo(), *a.begin()) << iter;
      ASSERT_EQ(sa.hi(), *a.rbegin() + 1) << iter;
      for (std::int64_t x = sa.lo() - 2; x < sa.hi() + 2; ++x)
        ASSERT_EQ(sa.contains(x), a.count(x) == 1) << iter << " byte " << x;
    }
    const bool want = intersect(a, b);
    ASSERT_EQ(overlaps(sa, sb), want) << iter;
    ASSERT_EQ(overlaps(sb, sa), want) << iter;
    overlapping += want;
    if (!want && !a.empty() && !b.empty() && sa.lo() < sb.hi() && sb.lo() < sa.hi())
      ++disjoint_in_range;
    if (covers(sa, sb)) {
      ASSERT_TRUE(subset(b, a)) << iter;
      ++covered;
    }
  }
  // The random mix exercised every outcome (interleaved disjoint sets included).
  EXPECT_GT(overlapping, 1000);
  EXPECT_GT(disjoint_in_range, 500);
  EXPECT_GT(covered, 100);
  // Sub-blocks of blocks are recognised as covered.
  for (int iter = 0; iter < 2000; ++iter) {
    const std::int64_t n = pick(4, 40), e = pick(1, 4);
    const std::int64_t r0 = pick(0, 5), rows = pick(1, 6), c0 = pick(0, static_cast<int>(n) - 1);
    const std::int64_t cols = pick(1, static_cast<int>(n - c0));
    const std::int64_t r1 = r0 + pick(0, static_cast<int>(rows) - 1);
    const std::int64_t rows1 = pick(1, static_cast<int>(r0 + rows - r1));
    const std::int64_t c1 = c0 + pick(0, static_cast<int>(cols) - 1);
    const std::int64_t cols1 = pick(1, static_cast<int>(c0 + cols - c1));
    EXPECT_TRUE(
        covers(block(n, e, r0, rows, c0, cols).set(), block(n, e, r1, rows1, c1, cols1).set()))
        << n << " " << e << " " << r0 << " " << rows << " " << c0 << " " << cols;
  }
}

}  // namespace
}  // namespace trnsim::util
