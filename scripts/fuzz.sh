#!/usr/bin/env bash
# Fuzz the assembly parser for SECONDS (default 60) with libFuzzer + ASan + UBSan.
# Usage: scripts/fuzz.sh [SECONDS]. Exits non-zero when the fuzzer finds a crash, a hang or
# a round-trip mismatch; the reproducer is left in build-fuzz/artifacts/.
set -euo pipefail
seconds=${1:-60}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$root/build-fuzz"

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++ -DTRNSIM_FUZZ=ON -DTRNSIM_BENCH=OFF > "$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; exit 1; }
ninja -C "$build" -j2 isa_parse_fuzz

# Seed corpus: one file per representative line (kept across runs, grown by the fuzzer).
corpus="$build/corpus"
mkdir -p "$corpus" "$build/artifacts"
seed() { printf '%s\n' "$2" > "$corpus/seed-$1.asm"; }
seed matmul '[tensor] nc_matmul dst=psum[p0:128, off=0, float32, [[1,512]]], stationary=sbuf[p0:128, off=0, bfloat16, [[1,128]]], moving=sbuf[p0:128, off=256, bfloat16, [[512,2],[1,256]]], accumulate=accumulate wait s3>=1 signal s4+=1 @kernel.py:40:3'
seed dma '[dma.3] dma_copy dst=sbuf[p0:128, off=0, float32, [[1,1024]]], src=hbm[p0:128x1024, addr=0x1000, float32, [[1,1024]]], priority=2 rounding=sr name="load \"x\"\t" @"my file.py":3:4'
seed scalar '.seed 42
# comment
[vector] tensor_scalar dst=sbuf[p0:128, off=0, bf16, [[1,512]]], data=psum[p0:128, off=0, fp32, [[1,512]]], op0=subtract, operand0=sbuf[p0:128, off=4096, fp32, [[1,1]]], op1=multiply, operand1=-0x1.8p3 @?'
seed custom '[gpsimd] custom_op op="topk", outputs=[sbuf[p0:128, off=0, float32, [[1,8]]]], inputs=[sbuf[p0:128, off=64, float32, [[1,512]]], sbuf[p32:64, off=0, int32, [[0,4],[-1,8]]]], params=[1.5,nan(0x7fc00001),-inf,1e-45], cost_cycles=18446744073709551615'
seed shuffle '[vector] nc_stream_shuffle dst=sbuf[p0:32, off=0, float32, [[1,16]]], src=sbuf[p0:32, off=64, float32, [[1,16]]], mask=[1,0,3,2,5,4,7,6,9,8,11,10,13,12,15,14,17,16,19,18,21,20,23,22,25,24,27,26,29,28,31,255]
[gpsimd] iota dst=sbuf[p0:128, off=0, int32, [[1,512]]], pattern=[[1,512]], offset=-5, channel_multiplier=512
[sync] sem wait s1>=1, s2>=4294967295 signal s255+=1'
seed select '[vector] range_select dst=sbuf[p0:128, off=0, float32, [[1,512]]], on_true=sbuf[p0:128, off=2048, float32, [[1,512]]], comp_op0=greater, bound0=3, bound1=sbuf[p0:128, off=4096, float32, [[1,1]]], range_start=7, reduce_res=sbuf[p0:128, off=8192, float32, [[1,1]]]'

export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# -timeout: any single input slower than 10 s counts as a hang; -rss_limit_mb bounds memory.
"$build/src/isa/fuzz/isa_parse_fuzz" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=4096 -artifact_prefix="$build/artifacts/" -print_final_stats=1
