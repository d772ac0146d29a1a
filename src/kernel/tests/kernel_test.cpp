// Tracing, views and the checks made when an operation is recorded.
#include "kernel/kernel.h"

#include <gtest/gtest.h>

#include "arch/arch.h"
#include "arch/tests/test_presets.h"

namespace trnsim::kernel {
namespace {

using numerics::DType;

using arch::testing::trn3;

std::vector<KernelIr> trace_one(const KernelFn& fn, std::vector<TensorSpec> inputs = {}) {
  return trace(fn, inputs, trn3(), {.name = "test"});
}

TEST(KernelTrace, LoadComputeStoreRecordsThreeInstructions) {
  auto ir = trace_one(
      [](std::span<const Tensor> in) {
        Tensor out = nl::ndarray({128, 64}, DType::kFloat32, nl::shared_hbm, "out");
        Tensor t = nl::load(in[0]);
        nisa::tensor_scalar(t, t, isa::AluOp::kAdd, 1.0f);
        nl::store(out, t);
        return std::vector<Tensor>{out};
      },
      {{"x", DType::kFloat32, {128, 64}}});
  ASSERT_EQ(ir.size(), 1u);
  const KernelIr& k = ir[0];
  ASSERT_EQ(k.instructions.size(), 3u);
  EXPECT_EQ(isa::op_name(k.instructions[0].inst.op), "dma_copy");
  EXPECT_EQ(isa::op_name(k.instructions[1].inst.op), "tensor_scalar");
  EXPECT_EQ(isa::op_name(k.instructions[2].inst.op), "dma_copy");
  // tensor_scalar may run on vector, scalar or gpsimd: the compiler chooses.
  EXPECT_EQ(k.instructions[1].engines, isa::kComputeEngines);
  EXPECT_FALSE(k.instructions[1].engine_fixed);
  ASSERT_EQ(k.inputs.size(), 1u);
  ASSERT_EQ(k.outputs.size(), 1u);
  EXPECT_EQ(k.storages[k.outputs[0]].role, TensorRole::kOutput);
  EXPECT_EQ(k.storages[k.inputs[0]].role, TensorRole::kInput);
  // Every instruction points at this file.
  for (const auto& inst : k.instructions)
    EXPECT_NE(inst.inst.origin.file.find("kernel_test.cpp"), std::string::npos);
}

TEST(KernelViews, SlicesLowerToAccessPatternsInTheStorageWindow) {
  trace_one([](std::span<const Tensor>) {
    Tensor t = nl::ndarray({128, 4, 512}, DType::kBFloat16, nl::sbuf, "t");
    const isa::AccessPattern full = t.ap();
    EXPECT_EQ(full.memory, isa::Memory::kSbuf);
    EXPECT_EQ(storage_of_offset(full.offset), t.storage());
    EXPECT_EQ(offset_in_storage(full.offset), 0u);
    EXPECT_EQ(full.partitions, 128u);
    EXPECT_EQ(full.num_dims, 1);  // [4, 512] contiguous merges into one dim
    EXPECT_EQ(full.dims[0].count, 2048u);

    Tensor v = t(nl::ds(32, 32), 2, nl::ds(256, 128));
    const isa::AccessPattern ap = v.ap();
    EXPECT_EQ(ap.start_partition, 32u);
    EXPECT_EQ(ap.partitions, 32u);
    EXPECT_EQ(offset_in_storage(ap.offset), (2 * 512 + 256) * 2u);
    EXPECT_EQ(ap.num_dims, 1);
    EXPECT_EQ(ap.dims[0].count, 128u);

    // Every other element of all 4 rows is one stride-2 walk...
    const isa::AccessPattern every_other = t(nl::all, nl::all, Slice{0, 512, 2}).ap();
    EXPECT_EQ(every_other.num_dims, 1);
    EXPECT_EQ(every_other.dims[0].step, 2);
    EXPECT_EQ(every_other.dims[0].count, 1024u);
    // ...but every other element of each row's first half is not.
    Tensor strided = t(nl::all, nl::all, Slice{0, 256, 2});
    const isa::AccessPattern sp = strided.ap();
    EXPECT_EQ(sp.num_dims, 2);
    EXPECT_EQ(sp.dims[0].step, 512);
    EXPECT_EQ(sp.dims[0].count, 4u);
    EXPECT_EQ(sp.dims[1].step, 2);
    EXPECT_EQ(sp.dims[1].count, 128u);
    // ap_exact keeps one dim per free dim (tensor_reduce's axes count them).
    EXPECT_EQ(t.ap_exact().num_dims, 2);
    return std::vector<Tensor>{};
  });
}

TEST(KernelViews, IntegerIndexKeepsTwoDimsOnChipAndDropsInHbm) {
  trace_one(
      [](std::span<const Tensor> in) {
        Tensor t = nl::ndarray({128, 512}, DType::kFloat32, nl::sbuf);
        EXPECT_EQ(t(3).shape(), (Shape{1, 512}));
        EXPECT_EQ(t(nl::all, 7).shape(), (Shape{128, 1}));
        EXPECT_EQ(in[0](5).shape(), (Shape{64}));
        EXPECT_EQ(in[0](5, 6).shape(), (Shape{}));
        EXPECT_EQ(in[0].permute({1, 0}).shape(), (Shape{64, 256}));
        EXPECT_FALSE(in[0].permute({1, 0}).is_contiguous());
        EXPECT_EQ(in[0].reshape({128, 128}).shape(), (Shape{128, 128}));
        return std::vector<Tensor>{};
      },
      {{"x", DType::kFloat32, {256, 64}}});
}

TEST(KernelViews, ReshapeDimAndFlattenDimsSplitAndMergeStrides) {
  trace_one([](std::span<const Tensor>) {
    Tensor t = nl::ndarray({128, 2, 3, 4}, DType::kFloat32, nl::sbuf);
    const Tensor merged = t.flatten_dims(1, 2);
    EXPECT_EQ(merged.shape(), (Shape{128, 6, 4}));
    EXPECT_EQ(merged.strides(), (std::vector<std::int64_t>{0, 4, 1}));
    const Tensor split = merged.reshape_dim(1, {-1, 2});
    EXPECT_EQ(split.shape(), (Shape{128, 3, 2, 4}));
    EXPECT_EQ(split.strides(), (std::vector<std::int64_t>{0, 8, 4, 1}));
    // A strided dim splits into strided dims; size-1 dims do not stop a merge.
    const Tensor every_other = t.flatten_dims(1, 3).slice(1, 0, 24, 2);
    EXPECT_EQ(every_other.reshape_dim(1, {3, 4}).strides(), (std::vector<std::int64_t>{0, 8, 2}));
    EXPECT_EQ(t.expand_dim(2).flatten_dims(1, 3).shape(), (Shape{128, 6, 4}));
    // get_pattern: on chip, dim 0 pairs with the elements of a partition.
    EXPECT_EQ(t.pattern_pairs(),
              (std::vector<std::array<std::int64_t, 2>>{{24, 128}, {12, 2}, {4, 3}, {1, 4}}));
    EXPECT_THROW((void)t.permute({0, 2, 1, 3}).flatten_dims(1, 2), KernelError);
    EXPECT_THROW((void)t.flatten_dims(0, 1), KernelError);
    EXPECT_THROW((void)t.reshape_dim(3, {3, -1}), KernelError);
    EXPECT_THROW((void)t.reshape_dim(0, {2, 64}), KernelError);
    EXPECT_THROW((void)t.reshape_dim(3, {std::int64_t{1} << 40, std::int64_t{1} << 40}),
                 KernelError);  // no overflow into a wrong size
    return std::vector<Tensor>{};
  });
}

TEST(KernelErrors, OutOfRangeSliceNamesTheKernelLine) {
  try {
    trace_one([](std::span<const Tensor>) {
      Tensor t = nl::ndarray({128, 512}, DType::kFloat32, nl::sbuf, "tile");
      const int line = __LINE__ + 1;
      Tensor bad = t(nl::all, nl::ds(256, 512));
      ADD_FAILURE() << "no error for line " << line << bad.shape().size();
      return std::vector<Tensor>{};
    });
    FAIL() << "expected a KernelError";
  } catch (const KernelError& e) {
    EXPECT_NE(e.where().file.find("kernel_test.cpp"), std::string::npos);
    EXPECT_NE(
        std::string(e.what()).find("slice 256:768 is out of range for dim 1 (size 512) of 'tile'"),
        std::string::npos)
        << e.what();
  }
}

// A valid slice whose step is larger than the dim takes one element (its count used to
// overflow to an empty dim).
TEST(KernelViews, AHugeSliceStepTakesOneElement) {
  trace_one([](std::span<const Tensor>) {
    Tensor t = nl::ndarray({128, 512}, DType::kFloat32, nl::sbuf, "tile");
    nisa::memset(t, 1.0f);
    const Tensor column = t(nl::all, Slice{3, kEnd, std::int64_t{1} << 62});
    EXPECT_EQ(column.shape(), (Shape{128, 1}));
    const Tensor row = t(Slice{5, 6, std::int64_t{1} << 62}, nl::all);  // one partition
    EXPECT_EQ(row.shape(), (Shape{1, 512}));
    EXPECT_EQ(row.partition_offset(), 5u);
    Tensor out = nl::ndarray({128, 1}, DType::kFloat32, nl::sbuf, "out");
    nisa::tensor_copy(out, column);
    return std::vector<Tensor>{};
  });
}

TEST(KernelErrors, MatmulIntoSbufIsRejectedWithTheRule) {
  int line = 0;
  try {
    trace_one([&](std::span<const Tensor>) {
      Tensor a = nl::ndarray({128, 128}, DType::kBFloat16, nl::sbuf);
      Tensor b = nl::ndarray({128, 512}, DType::kBFloat16, nl::sbuf);
      Tensor c = nl::ndarray({128, 512}, DType::kFloat32, nl::sbuf);
      line = __LINE__ + 1;
      nisa::nc_matmul(c, a, b);
      return std::vector<Tensor>{};
    });
    FAIL() << "expected a KernelError";
  } catch (const KernelError& e) {
    EXPECT_EQ(e.where().line, static_cast<std::uint32_t>(line));
    EXPECT_NE(std::string(e.what()).find("psum"), std::string::npos) << e.what();
  }
}

TEST(KernelErrors, EngineNarrowingAndImpossibleEngine) {
  auto ir = trace_one([](std::span<const Tensor>) {
    Tensor t = nl::ndarray({128, 64}, DType::kFloat32, nl::sbuf);
    nisa::memset(t, 0.0f);
    // An explicit engine that cannot run the operation is an error at this line.
    EXPECT_THROW(nisa::tensor_copy(t, t, {.engine = isa::Engine::kTensor}), KernelError);
    return std::vector<Tensor>{};
  });
  EXPECT_EQ(ir[0].instructions.size(), 1u);
}

TEST(KernelErrors, TileLargerThanSbufPartition) {
  EXPECT_THROW(trace_one([](std::span<const Tensor>) {
                 nl::ndarray({128, 1 << 20}, DType::kFloat32, nl::sbuf, "huge");
                 return std::vector<Tensor>{};
               }),
               KernelError);
  EXPECT_THROW(trace_one([](std::span<const Tensor>) {
                 nl::ndarray({256, 4}, DType::kFloat32, nl::sbuf);
                 return std::vector<Tensor>{};
               }),
               KernelError);
}

TEST(KernelErrors, OutputsMustLiveInSharedHbm) {
  EXPECT_THROW(trace_one([](std::span<const Tensor>) {
                 Tensor t = nl::ndarray({128, 4}, DType::kFloat32, nl::private_hbm);
                 return std::vector<Tensor>{t};
               }),
               KernelError);
}

TEST(KernelErrors, AnOutputNeverWrittenIsAnErrorWhereItIsDeclared) {
  int line = 0;
  try {
    trace_one(
        [&](std::span<const Tensor> in) {
          Tensor written = nl::ndarray({128, 4}, DType::kFloat32, nl::shared_hbm, "y");
          line = __LINE__ + 1;
          Tensor forgotten = nl::ndarray({128, 4}, DType::kFloat32, nl::shared_hbm, "z");
          nl::store(written, nl::load(in[0]));
          return std::vector<Tensor>{written, forgotten};
        },
        {{"x", DType::kFloat32, {128, 4}}});
    FAIL() << "expected a KernelError";
  } catch (const KernelError& e) {
    EXPECT_EQ(e.where().line, static_cast<std::uint32_t>(line)) << e.what();
    EXPECT_NE(std::string(e.what()).find("returns 'z' but never writes it"), std::string::npos)
        << e.what();
  }
  // One program of two writing the whole output is enough: the check is over the launch.
  const auto programs = trace(
      [](std::span<const Tensor> in) {
        Tensor out = nl::ndarray({128, 4}, DType::kFloat32, nl::shared_hbm, "out");
        if (nl::program_id() == 0) nl::store(out, nl::load(in[0]));
        return std::vector<Tensor>{out};
      },
      std::vector<TensorSpec>{{"x", DType::kFloat32, {128, 4}}}, trn3(),
      {.name = "one_writer", .num_programs = 2});
  EXPECT_EQ(programs.size(), 2u);
}

// A Tensor names its storage by an index into its own trace: one kept from another trace
// would alias whatever storage has that index there. Using it is an error at the use.
TEST(KernelErrors, ATensorOfAnotherTraceIsAnErrorWhereItIsUsed) {
  Tensor kept;
  int line = 0;
  try {
    trace(
        [&](std::span<const Tensor> in) {
          Tensor out = nl::ndarray({128, 4}, DType::kFloat32, nl::shared_hbm, "out");
          if (nl::program_id() == 0) {
            kept = nl::load(in[0]);
          } else {
            line = __LINE__ + 1;
            nl::store(out, kept);
          }
          return std::vector<Tensor>{out};
        },
        std::vector<TensorSpec>{{"x", DType::kFloat32, {128, 4}}}, trn3(),
        {.name = "shared_tile", .num_programs = 2});
    FAIL() << "expected a KernelError";
  } catch (const KernelError& e) {
    EXPECT_EQ(e.where().line, static_cast<std::uint32_t>(line)) << e.what();
    EXPECT_NE(std::string(e.what()).find("a tensor of another trace"), std::string::npos)
        << e.what();
  }
}

// A problem larger than the device is refused with its figures before it is traced (or
// while, for the HBM a kernel declares itself), never by the host running out of memory.
TEST(KernelErrors, InputsLargerThanTheChipsHbmAreRefusedBeforeTracing) {
  bool traced = false;
  try {
    trace(
        [&](std::span<const Tensor>) {
          traced = true;
          return std::vector<Tensor>{};
        },
        std::vector<TensorSpec>{{"a_t", DType::kBFloat16, {1'000'000, 1'000'000}}}, trn3(),
        {.name = "huge"});
    FAIL() << "expected a KernelError";
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("input 'a_t' [1000000, 1000000] of bfloat16 needs "
                                         "1.82 TiB; trn3 has 144 GiB of HBM"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(traced);
}

TEST(KernelErrors, AnHbmTensorBeyondTheChipsHbmNamesItsLine) {
  int line = 0;
  try {
    trace_one(
        [&](std::span<const Tensor>) {
          line = __LINE__ + 1;
          Tensor big = nl::ndarray({1 << 20, 1 << 20}, DType::kFloat32, nl::shared_hbm, "big");
          return std::vector<Tensor>{big};
        },
        {{"x", DType::kFloat32, {128, 4}}});
    FAIL() << "expected a KernelError";
  } catch (const KernelError& e) {
    EXPECT_EQ(e.where().line, static_cast<std::uint32_t>(line)) << e.what();
    EXPECT_NE(std::string(e.what()).find("HBM tensor 'big' [1048576, 1048576] of float32 needs "
                                         "4 TiB"),
              std::string::npos)
        << e.what();
  }
  // More bytes than 2^64: the count does not wrap to a small allocation.
  try {
    trace_one(
        [&](std::span<const Tensor>) {
          Tensor big = nl::ndarray({std::int64_t{1} << 62, 8}, DType::kFloat32, nl::hbm, "wrap");
          return std::vector<Tensor>{big};
        },
        {{"x", DType::kFloat32, {128, 4}}});
    FAIL() << "expected a KernelError";
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("more than 2^64 bytes"), std::string::npos) << e.what();
  }
}

// A front end in another language (Python) locates what it records at its kernel's line.
TEST(KernelErrors, ASourceOverrideLocatesOperationsAndErrorsAtTheGivenLine) {
  const isa::Origin python{"kernel.py", 12, 5};
  const std::vector<KernelIr> irs = trace_one(
      [&](std::span<const Tensor> in) {
        const SourceOverride here(python);
        Tensor out = nl::ndarray({128, 4}, DType::kFloat32, nl::shared_hbm, "out");
        nl::store(out, nl::load(in[0]));
        return std::vector<Tensor>{out};
      },
      {{"x", DType::kFloat32, {128, 4}}});
  ASSERT_FALSE(irs.front().instructions.empty());
  for (const auto& inst : irs.front().instructions) EXPECT_EQ(inst.inst.origin, python);
  try {
    trace_one([&](std::span<const Tensor>) {
      const SourceOverride outer(python);
      {
        const SourceOverride inner({"other.py", 3, 0});
      }  // the inner override ends: the outer one is back
      Tensor tile = nl::ndarray({256, 4}, DType::kFloat32, nl::sbuf, "tile");
      return std::vector<Tensor>{tile};
    });
    FAIL() << "expected a KernelError";
  } catch (const KernelError& e) {
    EXPECT_EQ(e.where(), python) << e.what();
  }
}

TEST(KernelErrors, ALaunchRecordingTooManyInstructionsStopsAtItsLine) {
  int line = 0;
  try {
    trace(
        [&](std::span<const Tensor> in) {
          Tensor out = nl::ndarray({128, 4}, DType::kFloat32, nl::shared_hbm, "out");
          for (int i = 0; i < 100; ++i) {
            line = __LINE__ + 1;
            nl::store(out, nl::load(in[0]));
          }
          return std::vector<Tensor>{out};
        },
        std::vector<TensorSpec>{{"x", DType::kFloat32, {128, 4}}}, trn3(),
        {.name = "loop", .num_programs = 2, .max_instructions = 250});
    FAIL() << "expected a KernelError";
  } catch (const KernelError& e) {
    // Program 0 records 200 (a load and a store per step), program 1 runs out after 50:
    // the budget is the launch's, not each program's.
    EXPECT_EQ(e.where().line, static_cast<std::uint32_t>(line)) << e.what();
    EXPECT_NE(std::string(e.what()).find("records more than 250 instructions"), std::string::npos)
        << e.what();
  }
}

TEST(KernelErrors, ReturningAnInputSaysSoWithoutALibraryLocation) {
  try {
    trace_one([](std::span<const Tensor> in) { return std::vector<Tensor>{in[0]}; },
              {{"x", DType::kFloat32, {128, 4}}});
    FAIL() << "expected a KernelError";
  } catch (const KernelError& e) {
    EXPECT_TRUE(e.where().file.empty()) << e.what();
    EXPECT_NE(std::string(e.what()).find("returns its input 'x' as an output"), std::string::npos)
        << e.what();
  }
}

TEST(KernelErrors, CallsOutsideATraceAreReported) {
  EXPECT_FALSE(tracing());
  EXPECT_THROW(nl::ndarray({128, 4}, DType::kFloat32), KernelError);
}

TEST(KernelLnc, TracesOncePerProgramWithItsId) {
  std::vector<int> ids;
  auto ir = trace(
      [&](std::span<const Tensor> in) {
        ids.push_back(nl::program_id());
        EXPECT_EQ(nl::num_programs(), 2);
        Tensor out = nl::ndarray({256, 8}, DType::kFloat32, nl::shared_hbm, "out");
        const std::int64_t p = nl::program_id();
        Tensor t = nl::load(in[0](nl::ds(p * 128, 128), nl::all));
        nisa::core_barrier();
        nl::store(out(nl::ds(p * 128, 128), nl::all), t);
        return std::vector<Tensor>{out};
      },
      std::vector<TensorSpec>{{"x", DType::kFloat32, {256, 8}}}, trn3(),
      {.name = "lnc", .num_programs = 2});
  ASSERT_EQ(ir.size(), 2u);
  EXPECT_EQ(ids, (std::vector<int>{0, 1}));
  EXPECT_EQ(ir[1].program_id, 1);
  // The LNC size is checked against the chip.
  EXPECT_THROW(trace([](std::span<const Tensor>) { return std::vector<Tensor>{}; }, {}, trn3(),
                     {.name = "x", .num_programs = 3}),
               KernelError);
}

TEST(KernelIrText, ListsStoragesAndOperandsByName) {
  auto ir = trace_one(
      [](std::span<const Tensor> in) {
        Tensor out = nl::ndarray({128, 64}, DType::kFloat32, nl::shared_hbm, "out");
        Tensor t = nl::load(in[0]);
        nl::store(out, nl::exp(t));
        return std::vector<Tensor>{out};
      },
      {{"x", DType::kFloat32, {128, 64}}});
  const std::string text = format_ir(ir[0]);
  EXPECT_NE(text.find("%x = shared_hbm float32[128, 64] input"), std::string::npos) << text;
  EXPECT_NE(text.find("activation"), std::string::npos) << text;
  EXPECT_NE(text.find("dst=%out"), std::string::npos) << text;
}

TEST(KernelHelpers, SoftmaxExpandsToReduceExpReciprocalMultiply) {
  auto ir = trace_one([](std::span<const Tensor>) {
    Tensor x = nl::ndarray({128, 256}, DType::kFloat32, nl::sbuf);
    nisa::memset(x, 0.0f);
    nl::softmax(x);
    return std::vector<Tensor>{};
  });
  std::vector<std::string> ops;
  for (const auto& i : ir[0].instructions) ops.emplace_back(isa::op_name(i.inst.op));
  EXPECT_EQ(ops, (std::vector<std::string>{"memset", "tensor_reduce", "activation", "reciprocal",
                                           "tensor_scalar"}));
}

// floor/ceil/trunc are one scalar_tensor_tensor x - (x op +-1); tan is fmod, sin, cos, divide;
// invert one bitvec tensor_scalar; dtype= sets the result's dtype.
TEST(KernelHelpers, RoundingTanInvertAndRemaindersLowerToTheirInstructions) {
  auto ir = trace_one([](std::span<const Tensor>) {
    Tensor x = nl::ndarray({128, 64}, DType::kFloat32, nl::sbuf);
    nisa::memset(x, 1.5f);
    nl::floor(x);
    nl::ceil(x, DType::kInt32);
    nl::trunc(x);
    nl::tan(x, DType::kBFloat16);
    Tensor i = nl::ndarray({128, 64}, DType::kInt16, nl::sbuf);
    nisa::memset(i, 3.0f);
    nl::invert(i);
    nl::mod(x, 2.0f);
    nl::fmod(x, x);
    return std::vector<Tensor>{};
  });
  const auto& insts = ir[0].instructions;
  std::vector<std::string> ops;
  for (const auto& i : insts) ops.emplace_back(isa::op_name(i.inst.op));
  EXPECT_EQ(ops, (std::vector<std::string>{"memset", "scalar_tensor_tensor", "scalar_tensor_tensor",
                                           "scalar_tensor_tensor", "tensor_scalar", "activation",
                                           "activation", "tensor_tensor", "memset", "tensor_scalar",
                                           "tensor_scalar", "tensor_tensor"}));
  const struct {
    std::size_t index;
    isa::AluOp op;
    float divisor;
    DType dtype;
  } rounding[] = {{1, isa::AluOp::kMod, 1.0f, DType::kFloat32},
                  {2, isa::AluOp::kMod, -1.0f, DType::kInt32},
                  {3, isa::AluOp::kFmod, 1.0f, DType::kFloat32}};
  for (const auto& r : rounding) {
    const auto& stt = std::get<isa::ScalarTensorTensor>(insts[r.index].inst.op);
    EXPECT_EQ(stt.op0, r.op);
    EXPECT_EQ(std::get<float>(stt.operand0), r.divisor);
    EXPECT_EQ(stt.op1, isa::AluOp::kSubtract);
    EXPECT_TRUE(stt.reverse1);  // x - remainder
    EXPECT_EQ(stt.operand1, stt.data);
    EXPECT_EQ(stt.dst.dtype, r.dtype);
  }
  const auto& reduce = std::get<isa::TensorScalar>(insts[4].inst.op);
  EXPECT_EQ(reduce.op0, isa::AluOp::kFmod);
  EXPECT_EQ(std::get<float>(reduce.operand0), 3.14159265358979323846f);
  EXPECT_EQ(std::get<isa::Activation>(insts[5].inst.op).func, isa::ActivationFunc::kSin);
  EXPECT_EQ(std::get<isa::Activation>(insts[6].inst.op).func, isa::ActivationFunc::kCos);
  const auto& divide = std::get<isa::TensorTensor>(insts[7].inst.op);
  EXPECT_EQ(divide.op, isa::AluOp::kDivide);
  EXPECT_EQ(divide.dst.dtype, DType::kBFloat16);
  const auto& invert = std::get<isa::TensorScalar>(insts[9].inst.op);
  EXPECT_EQ(invert.op0, isa::AluOp::kInvert);
  EXPECT_EQ(invert.dst.dtype, DType::kInt16);
  EXPECT_EQ(insts[9].engines, isa::engine_bit(isa::Engine::kVector));  // bitvec: Vector only
  EXPECT_EQ(std::get<isa::TensorScalar>(insts[10].inst.op).op0, isa::AluOp::kMod);
  EXPECT_EQ(std::get<isa::TensorTensor>(insts[11].inst.op).op, isa::AluOp::kFmod);
}

TEST(KernelHelpers, InvertOfAFloatTileBreaksTheBitvecRule) {
  try {
    trace_one([](std::span<const Tensor>) {
      Tensor x = nl::ndarray({128, 8}, DType::kFloat32, nl::sbuf);
      nisa::memset(x, 0.0f);
      nl::invert(x);
      return std::vector<Tensor>{};
    });
    FAIL() << "no error";
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("tensor_scalar is not valid"), std::string::npos)
        << e.what();
  }
}

TEST(KernelHelpers, Activate2RecordsReluParam) {
  auto ir = trace_one([](std::span<const Tensor>) {
    Tensor x = nl::ndarray({128, 8}, DType::kFloat32, nl::sbuf);
    Tensor slope = nl::ndarray({128, 1}, DType::kFloat32, nl::sbuf);
    nisa::memset(x, 0.0f);
    nisa::memset(slope, 0.25f);
    Tensor y = nl::ndarray({128, 8}, DType::kFloat32, nl::sbuf);
    nisa::activate2(y, isa::ActivationFunc::kPrelu, x, 0.0f, 0.0f, isa::AluOp::kBypass,
                    isa::AluOp::kBypass, {.relu_param = slope});
    nisa::activate2(y, isa::ActivationFunc::kPrelu, x, 0.0f, 0.0f, isa::AluOp::kBypass,
                    isa::AluOp::kBypass, {.relu_param = 0.5f});
    return std::vector<Tensor>{};
  });
  const auto& insts = ir[0].instructions;
  ASSERT_EQ(insts.size(), 4u);
  const auto& with_tile = std::get<isa::Activate2>(insts[2].inst.op);
  ASSERT_TRUE(std::holds_alternative<isa::AccessPattern>(with_tile.relu_param));
  EXPECT_EQ(std::get<isa::AccessPattern>(with_tile.relu_param).partitions, 128u);
  EXPECT_EQ(std::get<float>(std::get<isa::Activate2>(insts[3].inst.op).relu_param), 0.5f);
}

}  // namespace
}  // namespace trnsim::kernel
