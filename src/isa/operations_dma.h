// The DMA transfers (dma_copy, sendrecv, collective, dma_transpose, dma_indirect, dma_compute) and
// the synchronisation operations (sem, core_barrier), declared as every operation is
// (isa/operations.h explains the traits). Part of the public header isa/isa.h, through
// isa/operations.h; include that.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "isa/types.h"

namespace trnsim::isa {

// DMA -----------------------------------------------------------------------------------

// Copy with dtype cast (via fp32); accumulate=add is gen4 near-memory read-add-write into
// SBUF (bf16/fp32 dst).
struct DmaCopy {
  static constexpr std::string_view kName = "dma_copy";
  static constexpr OpClass kClass = OpClass::kDmaTransfer;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kDma);
  friend bool operator==(const DmaCopy&, const DmaCopy&) = default;
  AccessPattern dst, src;
  DmaAccumulate accumulate = DmaAccumulate::kNone;
  std::uint8_t priority = 0;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kReadWrite);
    v("src", src, Role::kRead);
    v("accumulate", accumulate, Role::kAttr);
    v("priority", priority, Role::kAttr);
  }
};

// Exchange between the cores of a logical core (NKI 0.6 nisa.sendrecv): this core's src goes
// to the dst of core `send_to` (a program id of the logical core) and dst receives the src of
// core `recv_from`. Matching instructions pair by pipe: the k-th sendrecv of a core on pipe p
// meets the k-th of its peers on pipe p; src is read when the call starts, the transfer
// starts when both have started, and each call completes when its data has arrived. Both tiles in
// SBUF, the same dtype and shape on every side (the data moves raw).
struct SendRecv {
  static constexpr std::string_view kName = "sendrecv";
  static constexpr OpClass kClass = OpClass::kDmaTransfer;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kDma);
  friend bool operator==(const SendRecv&, const SendRecv&) = default;
  AccessPattern dst, src;
  std::uint32_t send_to = 0, recv_from = 0, pipe = 0;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("src", src, Role::kRead);
    v("send_to", send_to, Role::kAttr);
    v("recv_from", recv_from, Role::kAttr);
    v("pipe", pipe, Role::kAttr);
  }
};

// A collective among the ranks of an SPMD launch (NKI 0.6 nki.collectives): every rank of
// a replica group runs it with its own src and dst, and the launch's collective engine moves
// and reduces the data (docs/collectives.md, "In kernels"). all_reduce: dst = op over the
// group's srcs; all_gather: dst = the srcs in group order, concatenated along the outermost
// dimension; reduce_scatter: dst = this rank's slice (in group order) of the op over the srcs;
// all_to_all: slice j of src goes to rank j, slice i of dst comes from rank i; permute: dst
// receives the src of the rank whose pair names this one as its target (no pairs: of the rank
// before it in its replica group, a ring: NKI's collective_permute_implicit). `groups` lists the
// replica groups' ranks, `group_size` at a time (empty: one group of every rank); `pairs`
// lists a permute's source, target, source, target, ... The k-th collective a core runs on
// a set of ranks meets the k-th of every other rank of that set (the same program id of each
// rank's logical core). src is read when the call starts; the call completes when its dst
// holds the result. HBM or SBUF (not both), the same dtype on both sides.
struct Collective {
  static constexpr std::string_view kName = "collective";
  static constexpr OpClass kClass = OpClass::kDmaTransfer;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kDma);
  friend bool operator==(const Collective&, const Collective&) = default;
  AccessPattern dst, src;
  CollectiveKind kind = CollectiveKind::kAllReduce;
  AluOp op = AluOp::kAdd;  // the reduction: add, max or min (all_reduce, reduce_scatter)
  std::vector<std::uint32_t> groups;
  std::uint32_t group_size = 0;
  std::vector<std::uint32_t> pairs;
  // src's outermost dimension, which reduce_scatter and all_to_all cut into a slice per rank
  // (0: not given; the run then checks element counts only).
  std::uint64_t split_rows = 0;
  // permute_reduce: the second operand; each rank sends op(src, src1).
  std::optional<AccessPattern> src1;
  // all_gather_v, all_to_all_v: uint32 rows of one column per member, read when the
  // collective runs (NKI's metadata_tensor): 0 send counts, 1 send displacements, 2 receive
  // counts (written by the collective unless recv_counts_known), 3 receive displacements
  // (with has_rdispls). Counts and displacements are in elements of the flat buffers.
  std::optional<AccessPattern> metadata;
  bool recv_counts_known = false;
  bool has_rdispls = false;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("src", src, Role::kRead);
    v("kind", kind, Role::kAttr);
    v("op", op, Role::kAttr);
    v("groups", groups, Role::kAttr);
    v("group_size", group_size, Role::kAttr);
    v("pairs", pairs, Role::kAttr);
    v("split_rows", split_rows, Role::kAttr);
    v("src1", src1, Role::kRead);
    v("metadata", metadata, recv_counts_known ? Role::kRead : Role::kReadWrite);
    v("recv_counts_known", recv_counts_known, Role::kAttr);
    v("has_rdispls", has_rdispls, Role::kAttr);
  }
};

// dst[F, P] = src[P, F]^T while copying into SBUF (2- and 4-byte types).
struct DmaTranspose {
  static constexpr std::string_view kName = "dma_transpose";
  static constexpr OpClass kClass = OpClass::kDmaTransfer;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kDma);
  friend bool operator==(const DmaTranspose&, const DmaTranspose&) = default;
  AccessPattern dst, src;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("src", src, Role::kRead);
  }
};

// Gather: dst row r = src row index[r]; scatter: dst row index[r] = src row r. A "row" is one
// partition of the SBUF side and `partition_step` elements of the HBM side. index: uint32/int32
// (NKI's .ap(vector_offset=)). accumulate=add is dma_compute's read-modify-write: the row is
// added to (fp32 inside, one rounding into dst); a scatter's indices must then be unique.
// oob=skip leaves out the rows whose index is outside the indexed side. transpose=true is
// dma_transpose of a gathered view: dst[F, R] = (src rows idx[0..R))^T, the index read in
// column-major order (NKI: indices.T.flatten()).
struct DmaIndirect {
  static constexpr std::string_view kName = "dma_indirect";
  static constexpr OpClass kClass = OpClass::kDmaTransfer;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kDma);
  friend bool operator==(const DmaIndirect&, const DmaIndirect&) = default;
  AccessPattern dst, src, index;
  IndirectMode mode = IndirectMode::kGather;
  DmaAccumulate accumulate = DmaAccumulate::kNone;
  OobMode oob = OobMode::kError;
  bool transpose = false;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kReadWrite);
    v("src", src, Role::kRead);
    v("index", index, Role::kRead);
    v("mode", mode, Role::kAttr);
    v("accumulate", accumulate, Role::kAttr);
    v("oob", oob, Role::kAttr);
    v("transpose", transpose, Role::kAttr);
  }
};

// dst = srcs[0] + srcs[1] + ... elementwise, computed by the DMA engine in fp32 (left to
// right, one rounding into dst); 1 to 16 sources with dst's element count (NKI 0.6
// dma_compute without read-modify-write: reduce_op add, scales 1.0).
struct DmaCompute {
  static constexpr std::string_view kName = "dma_compute";
  static constexpr OpClass kClass = OpClass::kDmaTransfer;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kDma);
  friend bool operator==(const DmaCompute&, const DmaCompute&) = default;
  AccessPattern dst;
  std::vector<AccessPattern> srcs;
  AluOp reduce_op = AluOp::kAdd;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("srcs", srcs, Role::kRead);
    v("reduce_op", reduce_op, Role::kAttr);
  }
};

// Synchronisation -----------------------------------------------------------------------

// Does nothing but carry waits and signals (an explicit semaphore wait/signal instruction).
struct SemaphoreOp {
  static constexpr std::string_view kName = "sem";
  static constexpr OpClass kClass = OpClass::kSequencer;
  static constexpr std::uint8_t kEngines = kAnyQueue;
  friend bool operator==(const SemaphoreOp&, const SemaphoreOp&) = default;
  template <class V>
  void fields(V&&) {}
};

// Barrier between the physical cores of a logical core (LNC >= 2).
struct CoreBarrier {
  static constexpr std::string_view kName = "core_barrier";
  static constexpr OpClass kClass = OpClass::kSequencer;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kGpSimd) | engine_bit(Engine::kSync);
  friend bool operator==(const CoreBarrier&, const CoreBarrier&) = default;
  std::uint32_t barrier_id = 0;
  std::uint32_t num_cores = 2;
  template <class V>
  void fields(V&& v) {
    v("barrier_id", barrier_id, Role::kAttr);
    v("num_cores", num_cores, Role::kAttr);
  }
};

}  // namespace trnsim::isa
