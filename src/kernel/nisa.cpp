// nki.isa: each call builds one ISA operation from the views it is given and records it.
#include <fmt/core.h>

#include "kernel/kernel.h"
#include "kernel/tracer.h"

namespace trnsim::nisa {

using kernel::Tracer;

namespace {

isa::ScalarOperand scalar(const Scalar& s, const Loc& loc) {
  if (const float* f = std::get_if<float>(&s)) return *f;
  return std::get<Tensor>(s).ap(loc);
}

Tracer::Placement placement(const Common& c) {
  return {c.engine, std::nullopt, c.rounding, c.name};
}

void record(isa::Operation op, const Common& c, const Loc& loc) {
  Tracer::current(loc).record(std::move(op), placement(c), loc);
}

// The random operations that may run on either engine read and write that engine's
// generators, so the engine is NKI's default when the kernel leaves it open (not the
// scheduler's pick): GpSimd for the state, Vector for rng.
Common on_engine_or(const Common& c, Engine fallback) {
  Common fixed = c;
  if (!fixed.engine) fixed.engine = fallback;
  return fixed;
}

void record_dma(isa::Operation op, const DmaOptions& o, const Loc& loc) {
  Tracer::current(loc).record(std::move(op), {std::nullopt, o.queue, o.rounding, o.name}, loc);
}

isa::AffinePattern affine(const std::vector<isa::Dim>& dims, const Loc& loc) {
  if (dims.empty() || dims.size() > isa::kMaxFreeDims)
    throw kernel::KernelError(kernel::origin_of(loc),
                              fmt::format("an affine pattern needs 1 to {} dims, not {}",
                                          isa::kMaxFreeDims, dims.size()));
  isa::AffinePattern p;
  p.num_dims = static_cast<std::uint8_t>(dims.size());
  for (std::size_t k = 0; k < dims.size(); ++k) p.dims[k] = dims[k];
  return p;
}

}  // namespace

namespace {

// The operands and options both matmuls have (NcMatmul, NcMatmulMx).
template <class MatmulOp>
MatmulOp matmul_op(const Tensor& dst, const Tensor& stationary, const Tensor& moving,
                   const MatmulOptions& o, const Loc& loc) {
  MatmulOp op;
  op.dst = dst.ap(loc);
  op.stationary = stationary.ap(loc);
  op.moving = moving.ap(loc);
  Tracer& tracer = Tracer::current(loc);
  bool accumulate = false;
  if (o.accumulate) {
    accumulate = *o.accumulate;
    tracer.note_matmul_write(op.dst);
  } else {
    accumulate = tracer.matmul_accumulates(op.dst, loc);
  }
  op.accumulate = accumulate ? AccumulateMode::kAccumulate : AccumulateMode::kOverwrite;
  op.tile_row = o.tile_row;
  op.tile_rows = o.tile_rows;
  return op;
}

}  // namespace

void nc_matmul(const Tensor& dst, const Tensor& stationary, const Tensor& moving,
               const MatmulOptions& o, Loc loc) {
  auto op = matmul_op<isa::NcMatmul>(dst, stationary, moving, o, loc);
  op.is_transpose = o.is_transpose;
  op.perf_mode = o.perf_mode;
  op.tile_col = o.tile_col;
  op.tile_cols = o.tile_cols;
  // The double-row layout [K, 2, F] is read from the pattern's dims: keep them.
  if (o.perf_mode == isa::MatmulPerfMode::kDoubleRow) {
    op.stationary = stationary.ap_exact(loc);
    op.moving = moving.ap_exact(loc);
  }
  record(op, Common{.engine = Engine::kTensor, .name = o.name}, loc);
}

void nc_matmul_mx(const Tensor& dst, const Tensor& stationary, const Tensor& moving,
                  const Tensor& stationary_scale, const Tensor& moving_scale,
                  const MatmulOptions& o, Loc loc) {
  auto op = matmul_op<isa::NcMatmulMx>(dst, stationary, moving, o, loc);
  op.stationary_scale = stationary_scale.ap(loc);
  op.moving_scale = moving_scale.ap(loc);
  record(op, Common{.engine = Engine::kTensor, .name = o.name}, loc);
}

void nc_transpose(const Tensor& dst, const Tensor& data, const Common& c, Loc loc) {
  record(isa::NcTranspose{dst.ap(loc), data.ap(loc)}, c, loc);
}

void activation(const Tensor& dst, ActivationFunc func, const Tensor& data,
                const ActivationOptions& o, Loc loc) {
  isa::Activation op;
  op.dst = dst.ap(loc);
  op.data = data.ap(loc);
  op.func = func;
  op.scale = scalar(o.scale, loc);
  op.bias = scalar(o.bias, loc);
  if (o.reduce_res) op.reduce_res = o.reduce_res->ap(loc);
  record(op, o.common, loc);
}

void activate2(const Tensor& dst, ActivationFunc func, const Tensor& data, const Scalar& imm0,
               const Scalar& imm1, AluOp op0, AluOp op1, const Activate2Options& o, Loc loc) {
  isa::Activate2 t;
  t.dst = dst.ap(loc);
  t.data = data.ap(loc);
  t.func = func;
  t.op0 = op0;
  t.imm0 = scalar(imm0, loc);
  t.reverse0 = o.reverse0;
  t.op1 = op1;
  t.imm1 = scalar(imm1, loc);
  t.reverse1 = o.reverse1;
  t.reduce_op = o.reduce_op;
  if (o.reduce_res) t.reduce_res = o.reduce_res->ap(loc);
  t.relu_param = scalar(o.relu_param, loc);
  record(t, o.common, loc);
}

void tensor_tensor(const Tensor& dst, const Tensor& data1, const Tensor& data2, AluOp op,
                   const Common& c, Loc loc) {
  isa::TensorTensor t;
  t.dst = dst.ap(loc);
  t.data1 = data1.ap(loc);
  t.data2 = data2.ap(loc);
  t.op = op;
  record(t, c, loc);
}

void tensor_scalar(const Tensor& dst, const Tensor& data, AluOp op0, const Scalar& operand0,
                   const TensorScalarOptions& o, Loc loc) {
  isa::TensorScalar t;
  t.dst = dst.ap(loc);
  t.data = data.ap(loc);
  t.op0 = op0;
  t.operand0 = scalar(operand0, loc);
  t.reverse0 = o.reverse0;
  t.op1 = o.op1;
  t.operand1 = scalar(o.operand1, loc);
  t.reverse1 = o.reverse1;
  record(t, o.common, loc);
}

void tensor_scalar_reduce(const Tensor& dst, const Tensor& data, AluOp op0, const Scalar& operand0,
                          AluOp reduce_op, const TensorScalarReduceOptions& o, Loc loc) {
  isa::TensorScalarReduce t;
  t.dst = dst.ap(loc);
  t.data = data.ap(loc);
  t.op0 = op0;
  t.operand0 = scalar(operand0, loc);
  t.reverse0 = o.reverse0;
  t.reduce_op = reduce_op;
  if (o.reduce_res) t.reduce_res = o.reduce_res->ap(loc);
  t.reduce_res_negate = o.reduce_res_negate;
  record(t, o.common, loc);
}

void tensor_scalar_cumulative(const Tensor& dst, const Tensor& src, AluOp op0, AluOp op1,
                              const Scalar& imm0, const TensorScalarCumulativeOptions& o, Loc loc) {
  isa::TensorScalarCumulative t;
  t.dst = dst.ap(loc);
  t.src = src.ap(loc);
  t.op0 = op0;
  t.imm0 = scalar(imm0, loc);
  t.op1 = op1;
  t.imm1 = scalar(o.imm1, loc);
  t.reduce_cmd = o.reduce_cmd;
  record(t, o.common, loc);
}

void scalar_tensor_tensor(const Tensor& dst, const Tensor& data, AluOp op0, const Scalar& operand0,
                          AluOp op1, const Tensor& operand1, const ScalarTensorTensorOptions& o,
                          Loc loc) {
  isa::ScalarTensorTensor t;
  t.dst = dst.ap(loc);
  t.data = data.ap(loc);
  t.op0 = op0;
  t.operand0 = scalar(operand0, loc);
  t.op1 = op1;
  t.operand1 = operand1.ap(loc);
  t.reverse0 = o.reverse0;
  t.reverse1 = o.reverse1;
  record(t, o.common, loc);
}

void tensor_reduce(const Tensor& dst, const Tensor& data, AluOp op, const ReduceOptions& o,
                   Loc loc) {
  isa::TensorReduce t;
  t.dst = dst.ap(loc);
  t.data = data.ap_exact(loc);  // axes counts the view's own free dims
  t.op = op;
  t.axes = o.axes;
  t.negate = o.negate;
  record(t, o.common, loc);
}

void tensor_partition_reduce(const Tensor& dst, const Tensor& data, AluOp op, const Common& c,
                             Loc loc) {
  isa::TensorPartitionReduce t;
  t.dst = dst.ap(loc);
  t.data = data.ap(loc);
  t.op = op;
  record(t, c, loc);
}

void tensor_copy(const Tensor& dst, const Tensor& src, const Common& c, Loc loc) {
  record(isa::TensorCopy{dst.ap(loc), src.ap(loc)}, c, loc);
}

void tensor_copy_predicated(const Tensor& dst, const Scalar& src, const Tensor& predicate,
                            const CopyPredicatedOptions& o, Loc loc) {
  isa::TensorCopyPredicated t;
  t.dst = dst.ap(loc);
  if (const float* value = std::get_if<float>(&src)) {
    t.src_value = *value;
  } else {
    t.src = std::get<Tensor>(src).ap(loc);
  }
  t.predicate = predicate.ap(loc);
  t.reverse_pred = o.reverse_pred;
  record(t, o.common, loc);
}

void tensor_tensor_scan(const Tensor& dst, const Tensor& data0, const Tensor& data1,
                        const Scalar& initial, AluOp op0, AluOp op1, const Common& c, Loc loc) {
  isa::TensorTensorScan t;
  t.dst = dst.ap(loc);
  t.data0 = data0.ap(loc);
  t.data1 = data1.ap(loc);
  t.initial = scalar(initial, loc);
  t.op0 = op0;
  t.op1 = op1;
  record(t, c, loc);
}

void bn_stats(const Tensor& dst, const Tensor& data, const Common& c, Loc loc) {
  record(isa::BnStats{dst.ap(loc), data.ap(loc)}, c, loc);
}

void bn_aggr(const Tensor& dst, const Tensor& data, const Common& c, Loc loc) {
  record(isa::BnAggr{dst.ap(loc), data.ap(loc)}, c, loc);
}

void select(const Tensor& dst, const Tensor& predicate, const Tensor& on_true,
            const Scalar& on_false, const Common& c, Loc loc) {
  isa::Select t;
  t.dst = dst.ap(loc);
  t.predicate = predicate.ap(loc);
  t.on_true = on_true.ap(loc);
  t.on_false = scalar(on_false, loc);
  record(t, c, loc);
}

void iota(const Tensor& dst, const AffineOptions& o, Loc loc) {
  isa::Iota t;
  t.dst = dst.ap(loc);
  t.pattern = affine(o.pattern, loc);
  t.offset = o.offset;
  t.channel_multiplier = o.channel_multiplier;
  record(t, o.common, loc);
}

void affine_select(const Tensor& dst, const Tensor& on_true, AluOp cmp_op, float on_false_value,
                   const AffineOptions& o, Loc loc) {
  isa::AffineSelect t;
  t.dst = dst.ap(loc);
  t.on_true = on_true.ap(loc);
  t.pattern = affine(o.pattern, loc);
  t.offset = o.offset;
  t.channel_multiplier = o.channel_multiplier;
  t.cmp_op = cmp_op;
  t.on_false_value = on_false_value;
  record(t, o.common, loc);
}

void range_select(const Tensor& dst, const Tensor& on_true, AluOp comp_op0, AluOp comp_op1,
                  const Scalar& bound0, const Scalar& bound1, const RangeSelectOptions& o,
                  Loc loc) {
  isa::RangeSelect t;
  t.dst = dst.ap(loc);
  t.on_true = on_true.ap(loc);
  t.comp_op0 = comp_op0;
  t.comp_op1 = comp_op1;
  t.bound0 = scalar(bound0, loc);
  t.bound1 = scalar(bound1, loc);
  t.on_false_value = o.on_false_value;
  t.range_start = o.range_start;
  if (o.reduce_res) t.reduce_res = o.reduce_res->ap(loc);
  record(t, o.common, loc);
}

void nc_stream_shuffle(const Tensor& dst, const Tensor& src,
                       const std::array<std::uint8_t, 32>& mask, const Common& c, Loc loc) {
  record(isa::NcStreamShuffle{dst.ap(loc), src.ap(loc), mask}, c, loc);
}

void memset(const Tensor& dst, float value, const Common& c, Loc loc) {
  record(isa::Memset{dst.ap(loc), value}, c, loc);
}

void max8(const Tensor& dst, const Tensor& src, const Common& c, Loc loc) {
  record(isa::Max8{dst.ap(loc), src.ap(loc)}, c, loc);
}

void nc_find_index8(const Tensor& dst, const Tensor& data, const Tensor& vals, const Common& c,
                    Loc loc) {
  record(isa::NcFindIndex8{dst.ap(loc), data.ap(loc), vals.ap(loc)}, c, loc);
}

void nc_match_replace8(const Tensor& dst, const Tensor& data, const Tensor& vals, float imm,
                       const std::optional<Tensor>& dst_idx, const Common& c, Loc loc) {
  isa::NcMatchReplace8 t;
  t.dst = dst.ap(loc);
  t.data = data.ap(loc);
  t.vals = vals.ap(loc);
  t.imm = imm;
  if (dst_idx) t.dst_idx = dst_idx->ap(loc);
  record(t, c, loc);
}

void exponential(const Tensor& dst, const Tensor& src, const ExponentialOptions& o, Loc loc) {
  isa::Exponential t;
  t.dst = dst.ap(loc);
  t.src = src.ap(loc);
  t.max_value = scalar(o.max_value, loc);
  if (o.reduce_res) t.reduce_res = o.reduce_res->ap(loc);
  record(t, o.common, loc);
}

void reciprocal(const Tensor& dst, const Tensor& data, const Common& c, Loc loc) {
  record(isa::Reciprocal{dst.ap(loc), data.ap(loc)}, c, loc);
}

void quantize_mx(const Tensor& dst, const Tensor& src, const Tensor& dst_scale, const Common& c,
                 Loc loc) {
  record(isa::QuantizeMx{dst.ap(loc), src.ap(loc), dst_scale.ap(loc)}, c, loc);
}

void local_gather(const Tensor& dst, const Tensor& src, const Tensor& index,
                  std::uint32_t num_elem_per_idx, const Common& c, Loc loc) {
  record(isa::LocalGather{dst.ap(loc), src.ap(loc), index.ap(loc), num_elem_per_idx}, c, loc);
}

void rand2(const Tensor& dst, float min, float max, const Common& c, Loc loc) {
  record(isa::Rand2{dst.ap(loc), min, max}, c, loc);
}

void rand_set_state(const Tensor& src_seeds, const Common& c, Loc loc) {
  record(isa::RandSetState{src_seeds.ap(loc)}, on_engine_or(c, Engine::kGpSimd), loc);
}

void rand_get_state(const Tensor& dst, const Common& c, Loc loc) {
  record(isa::RandGetState{dst.ap(loc)}, on_engine_or(c, Engine::kGpSimd), loc);
}

void rng(const Tensor& dst, const Common& c, Loc loc) {
  record(isa::Rng{dst.ap(loc)}, on_engine_or(c, Engine::kVector), loc);
}

void set_rng_seed(const Tensor& src_seeds, const Common& c, Loc loc) {
  record(isa::SetRngSeed{src_seeds.ap(loc)}, c, loc);
}

void dropout(const Tensor& dst, const Tensor& data, const Scalar& prob, const Common& c, Loc loc) {
  record(isa::Dropout{dst.ap(loc), data.ap(loc), scalar(prob, loc)}, c, loc);
}

void sequence_bounds(const Tensor& dst, const Tensor& segment_ids, const Common& c, Loc loc) {
  record(isa::SequenceBounds{dst.ap(loc), segment_ids.ap(loc)}, c, loc);
}

void nonzero_with_count(const Tensor& dst, const Tensor& src, std::int32_t index_offset,
                        std::int32_t padding_val, const Common& c, Loc loc) {
  record(isa::NonzeroWithCount{dst.ap(loc), src.ap(loc), index_offset, padding_val}, c, loc);
}

void nc_n_gather(const Tensor& dst, const Tensor& data, const Tensor& indices, const Common& c,
                 Loc loc) {
  record(isa::NcNGather{dst.ap(loc), data.ap(loc), indices.ap(loc)}, c, loc);
}

void topk(const Tensor& val_dst, const Tensor& idx_dst, const Tensor& src, std::uint32_t n,
          const Common& c, Loc loc) {
  record(isa::Topk{val_dst.ap(loc), idx_dst.ap(loc), src.ap(loc), n}, c, loc);
}

void custom_op(const std::string& name, const std::vector<Tensor>& outputs,
               const std::vector<Tensor>& inputs, std::vector<float> params,
               std::uint64_t cost_cycles, Loc loc) {
  isa::CustomOp t;
  t.op = name;
  for (const Tensor& o : outputs) t.outputs.push_back(o.ap(loc));
  for (const Tensor& i : inputs) t.inputs.push_back(i.ap(loc));
  t.params = std::move(params);
  t.cost_cycles = cost_cycles;
  record(t, Common{}, loc);
}

void dma_copy(const Tensor& dst, const Tensor& src, const DmaOptions& o, Loc loc) {
  if (src.buffer() == kernel::Buffer::kPsum || dst.buffer() == kernel::Buffer::kPsum)
    throw kernel::KernelError(kernel::origin_of(loc),
                              "dma_copy cannot access PSUM (copy the tile to SBUF with "
                              "nisa::tensor_copy first)");
  if (src.is_indirect() || dst.is_indirect()) {
    if (src.is_indirect() && dst.is_indirect())
      throw kernel::KernelError(kernel::origin_of(loc),
                                "dma_copy with a vector offset on both sides (one side gathers "
                                "or scatters, the other is direct)");
    if (o.accumulate != isa::DmaAccumulate::kNone)
      throw kernel::KernelError(kernel::origin_of(loc),
                                "dma_copy cannot accumulate through a vector offset (dma_compute "
                                "adds into indexed rows)");
    const bool gather = src.is_indirect();
    const Tensor::IndirectOperands indexed = (gather ? src : dst).indirect_operands(loc);
    isa::DmaIndirect t{gather ? dst.ap(loc) : indexed.rows, gather ? indexed.rows : src.ap(loc),
                       indexed.index,
                       gather ? isa::IndirectMode::kGather : isa::IndirectMode::kScatter};
    t.oob = o.oob;
    record_dma(t, o, loc);
    return;
  }
  isa::DmaCopy t;
  t.dst = dst.ap(loc);
  t.src = src.ap(loc);
  t.accumulate = o.accumulate;
  record_dma(t, o, loc);
}

void dma_transpose(const Tensor& dst, const Tensor& src, const DmaOptions& o, Loc loc) {
  if (src.is_indirect()) {
    // NKI's gathering transpose: dst[F, R] = (the R rows the vector offset picks)^T.
    const Tensor::IndirectOperands indexed = src.indirect_operands(loc);
    isa::DmaIndirect t{dst.ap(loc), indexed.rows, indexed.index, isa::IndirectMode::kGather};
    t.transpose = true;
    t.oob = o.oob;
    record_dma(t, o, loc);
    return;
  }
  record_dma(isa::DmaTranspose{dst.ap(loc), src.ap(loc)}, o, loc);
}

void dma_indirect(const Tensor& dst, const Tensor& src, const Tensor& index, isa::IndirectMode mode,
                  const DmaOptions& o, Loc loc) {
  isa::DmaIndirect t{dst.ap(loc), src.ap(loc), index.ap(loc), mode};
  t.accumulate = o.accumulate;  // dma_compute's read-modify-write (validation has its rules)
  t.oob = o.oob;
  record_dma(t, o, loc);
}

namespace {

// Two views that name the same elements (for an indirect one: the same rows and index).
bool same_view(const Tensor& a, const Tensor& b, const Loc& loc) {
  if (a.is_indirect() != b.is_indirect() || a.storage() != b.storage()) return false;
  if (!a.is_indirect()) return a.ap(loc) == b.ap(loc);
  const Tensor::IndirectOperands x = a.indirect_operands(loc), y = b.indirect_operands(loc);
  return x.rows == y.rows && x.index == y.index;
}

// NKI's read-modify-write dma_compute: dst(HBM rows) += src(SBUF), a scatter, or dst(SBUF) +=
// src(HBM rows), a gather; the two sources are dst itself and the other operand.
void dma_compute_rmw(const Tensor& dst, const std::vector<Tensor>& srcs, const DmaOptions& o,
                     const Loc& loc) {
  const auto fail = [&](const std::string& why) {
    throw kernel::KernelError(kernel::origin_of(loc), "dma_compute with a vector offset: " + why);
  };
  if (srcs.size() != 2)
    fail(fmt::format("{} sources; a read-modify-write takes two, dst and the data", srcs.size()));
  const bool scatter = dst.is_indirect();
  const int dst_at = same_view(srcs[0], dst, loc) ? 0 : same_view(srcs[1], dst, loc) ? 1 : -1;
  if (dst_at < 0)
    fail(
        "one of the two sources must be dst itself (the same view, and the same vector offset "
        "for a scatter)");
  const Tensor& data = srcs[static_cast<std::size_t>(1 - dst_at)];
  if (scatter && data.is_indirect())
    fail("a scatter adds direct data into dst's rows; the data source has a vector offset too");
  if (!scatter && !data.is_indirect()) fail("no operand has a vector offset");
  // NKI: a scatter adds SBUF data into HBM rows, a gather adds HBM rows into an SBUF dst.
  const Tensor& direct = scatter ? data : dst;
  if (direct.buffer() != kernel::Buffer::kSbuf)
    fail(fmt::format(
        "a {} {} SBUF; '{}' is in {}", scatter ? "scatter-add's data" : "gather-add's dst",
        scatter ? "comes from" : "is in", direct.name(loc), kernel::buffer_name(direct.buffer())));
  const Tensor& indexed_view = scatter ? dst : data;
  const Tensor::IndirectOperands indexed = indexed_view.indirect_operands(loc);
  isa::DmaIndirect t{scatter ? indexed.rows : dst.ap(loc), scatter ? data.ap(loc) : indexed.rows,
                     indexed.index,
                     scatter ? isa::IndirectMode::kScatter : isa::IndirectMode::kGather};
  t.accumulate = isa::DmaAccumulate::kAdd;
  t.oob = o.oob;
  record_dma(t, o, loc);
}

}  // namespace

void dma_compute(const Tensor& dst, const std::vector<Tensor>& srcs, AluOp reduce_op,
                 const DmaOptions& o, Loc loc) {
  std::vector<const Tensor*> operands{&dst};
  for (const Tensor& s : srcs) operands.push_back(&s);
  for (const Tensor* t : operands)
    if (t->buffer() == kernel::Buffer::kPsum)
      throw kernel::KernelError(kernel::origin_of(loc),
                                "dma_compute cannot access PSUM (copy the tile to SBUF with "
                                "tensor_copy first)");
  if (std::any_of(operands.begin(), operands.end(),
                  [](const Tensor* t) { return t->is_indirect(); })) {
    if (reduce_op != AluOp::kAdd)
      throw kernel::KernelError(
          kernel::origin_of(loc),
          fmt::format("dma_compute reduce_op {} (only add)", isa::alu_op_name(reduce_op)));
    dma_compute_rmw(dst, srcs, o, loc);
    return;
  }
  isa::DmaCompute t;
  t.dst = dst.ap(loc);
  for (const Tensor& s : srcs) t.srcs.push_back(s.ap(loc));
  t.reduce_op = reduce_op;
  record_dma(t, o, loc);
}

void sendrecv(const Tensor& src, const Tensor& dst, int send_to_rank, int recv_from_rank,
              int pipe_id, const DmaOptions& o, Loc loc) {
  const int programs = Tracer::current(loc).ir().num_programs;
  for (const auto& [what, rank] :
       {std::pair{"send_to_rank", send_to_rank}, {"recv_from_rank", recv_from_rank}})
    if (rank < 0 || rank >= programs)
      throw kernel::KernelError(kernel::origin_of(loc),
                                fmt::format("sendrecv {} {}: the logical core has programs 0 to {}",
                                            what, rank, programs - 1));
  if (pipe_id < 0)
    throw kernel::KernelError(kernel::origin_of(loc),
                              fmt::format("sendrecv pipe_id {} is negative", pipe_id));
  isa::SendRecv x;
  x.src = src.ap(loc);
  x.dst = dst.ap(loc);
  x.send_to = static_cast<std::uint32_t>(send_to_rank);
  x.recv_from = static_cast<std::uint32_t>(recv_from_rank);
  x.pipe = static_cast<std::uint32_t>(pipe_id);
  record_dma(x, o, loc);
}

void core_barrier(Loc loc) {
  Tracer& t = Tracer::current(loc);
  isa::CoreBarrier b;
  b.barrier_id = t.next_barrier_id();
  b.num_cores = static_cast<std::uint32_t>(t.ir().num_programs);
  t.record(b, {Engine::kGpSimd, std::nullopt, isa::RoundingMode::kNearestEven, ""}, loc);
}

}  // namespace trnsim::nisa
