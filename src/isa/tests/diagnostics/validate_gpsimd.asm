# Validation rules of the random-number operations, the GpSimd index operations and
# tensor_scalar_cumulative, the operations NKI 0.6 added (docs/isa.md, "Per operation").
# -----
# rng writes integers
# chip: trn2
[vector] rng dst=sbuf[p0:128, off=0, uint16, [[1,512]]]
[vector] rng dst=sbuf[p0:128, off=0, fp32, [[1,512]]]  # expected-error {{operand 'dst': dtype float32 is not allowed here (allowed: int8, int16, int32, uint8, uint16, uint32)}}
# -----
# rng on gpsimd needs gen3
# chip: trn1
[gpsimd] rng dst=sbuf[p0:128, off=0, uint32, [[1,512]]]  # expected-error {{rng on gpsimd needs NeuronCore-v3 or newer (this chip is NeuronCore-v2)}}
# -----
# set_rng_seed takes one 32-bit value
# chip: trn2
[vector] set_rng_seed src_seeds=sbuf[p0:1, off=0, uint32, [[1,1]]]
[vector] set_rng_seed src_seeds=sbuf[p0:1, off=0, uint32, [[1,2]]]  # expected-error {{operand 'src_seeds': must be one 32-bit value of shape [1, 1], not [1, 2]}}
# -----
# dropout keeps the dtype and takes a probability
# chip: trn2
[vector] dropout dst=sbuf[p0:128, off=0, bf16, [[1,512]]], data=sbuf[p0:128, off=4096, bf16, [[1,512]]], prob=0.5
[vector] dropout dst=sbuf[p0:128, off=0, int32, [[1,512]]], data=sbuf[p0:128, off=4096, int32, [[1,512]]], prob=sbuf[p0:128, off=8192, fp32, [[1,1]]]
[vector] dropout dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, bf16, [[1,512]]], prob=1.5  # expected-error {{operand 'dst': dtype float32 differs from the data's bfloat16 (dropout keeps the dtype)}}
# expected-error@-1 {{operand 'prob': 1.5 is not a probability in [0, 1]}}
[vector] dropout dst=sbuf[p0:128, off=0, int32, [[1,512]]], data=sbuf[p0:128, off=4096, int32, [[1,512]]], prob=sbuf[p0:128, off=8192, bf16, [[1,1]]]  # expected-error {{operand 'prob': dtype bfloat16 is not allowed here (allowed: float32)}}
# -----
# tensor_scalar_cumulative: accumulating commands, scan operators, no 32-bit integers
# chip: trn2
[vector] tensor_scalar_cumulative dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, bf16, [[1,512]]], op0=multiply, imm0=2, op1=add
[vector] tensor_scalar_cumulative dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, bf16, [[1,512]]], op0=add, imm0=0, op1=maximum, imm1=sbuf[p0:128, off=8192, fp32, [[1,1]]], reduce_cmd=load_reduce
[vector] tensor_scalar_cumulative dst=sbuf[p0:128, off=0, int32, [[1,512]]], src=sbuf[p0:128, off=4096, bf16, [[1,512]]], op0=add, imm0=0, op1=divide, reduce_cmd=idle  # expected-error {{operand 'op1': operator divide is not allowed here (allowed: add, subtract, multiply, maximum, minimum)}}
# expected-error@-1 {{operand 'dst': dtype int32 is not allowed here (allowed: bfloat16, float16, float32, float8_e4m3fn, float8_e4m3, float8_e5m2, uint8, uint16, int8, int16)}}
# expected-error@-2 {{operand 'reduce_cmd': idle does not accumulate; a cumulative scan needs reset_reduce, reduce or load_reduce}}
[vector] tensor_scalar_cumulative dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, bf16, [[1,512]]], op0=add, imm0=0, op1=add, imm1=5  # expected-error {{operand 'imm1': imm1 is the accumulator's start value; it needs reduce_cmd=load_reduce}}
# -----
# sequence_bounds: one row in, [start, end] pairs out
# chip: trn2
[gpsimd] sequence_bounds dst=sbuf[p0:1, off=0, int32, [[512,2],[1,512]]], segment_ids=sbuf[p0:1, off=4096, int32, [[1,512]]]
[gpsimd] sequence_bounds dst=sbuf[p0:2, off=0, fp32, [[1,512]]], segment_ids=sbuf[p0:2, off=4096, bf16, [[1,512]]]  # expected-error {{operand 'segment_ids': has 2 partitions; sequence_bounds (one row) needs 1}}
# expected-error@-1 {{operand 'dst': has 2 partitions; sequence_bounds (one row) needs 1}}
# expected-error@-2 {{operand 'segment_ids': dtype bfloat16 is not allowed here (allowed: float32, int32)}}
# expected-error@-3 {{operand 'dst': has 512 elements per partition; a [start, end] pair per segment id needs 1024}}
# -----
# nonzero_with_count: gen3, float32/int32 in, int32 out, one extra element
# chip: trn3
[gpsimd] nonzero_with_count dst=sbuf[p0:128, off=0, int32, [[1,65]]], src=sbuf[p0:128, off=4096, fp32, [[1,64]]], index_offset=16
[gpsimd] nonzero_with_count dst=sbuf[p32:64, off=0, int32, [[1,65]]], src=sbuf[p32:64, off=4096, int32, [[1,64]]], padding_val=0
[gpsimd] nonzero_with_count dst=sbuf[p0:128, off=0, fp32, [[1,64]]], src=sbuf[p0:128, off=4096, bf16, [[1,64]]]  # expected-error {{operand 'dst': has 64 elements per partition; one index per src element plus the count needs 65}}
# expected-error@-1 {{operand 'src': dtype bfloat16 is not allowed here (allowed: float32, int32)}}
# expected-error@-2 {{operand 'dst': dtype float32 is not allowed here (allowed: int32)}}
# -----
# nonzero_with_count needs gen3
# chip: trn1
[gpsimd] nonzero_with_count dst=sbuf[p0:128, off=0, int32, [[1,65]]], src=sbuf[p0:128, off=4096, fp32, [[1,64]]]  # expected-error {{nonzero_with_count needs NeuronCore-v3 or newer (this chip is NeuronCore-v2)}}
# -----
# nc_n_gather: uint32 indices, no cast, one element per index
# chip: trn2
[gpsimd] nc_n_gather dst=sbuf[p0:128, off=0, bf16, [[1,64]]], data=sbuf[p0:128, off=4096, bf16, [[64,4],[1,64]]], indices=sbuf[p0:128, off=8192, uint32, [[1,64]]]
[gpsimd] nc_n_gather dst=sbuf[p0:128, off=0, fp32, [[1,32]]], data=sbuf[p0:128, off=4096, bf16, [[1,256]]], indices=sbuf[p0:128, off=8192, int32, [[1,64]]]  # expected-error {{operand 'indices': dtype int32 is not allowed here (allowed: uint32)}}
# expected-error@-1 {{operand 'dst': dtype float32 differs from the data's bfloat16 (nc_n_gather does not cast)}}
# expected-error@-2 {{operand 'dst': has 32 elements per partition; one element per index needs 64}}
# -----
# topk: bf16 snakes of 16 partitions, n and K in range, enough columns
# chip: trn3
[gpsimd] topk val_dst=sbuf[p0:128, off=0, bf16, [[1,8]]], idx_dst=sbuf[p0:128, off=64, uint32, [[1,8]]], src=sbuf[p0:128, off=4096, bf16, [[1,3]]], n=42
[gpsimd] topk val_dst=sbuf[p0:24, off=0, bf16, [[1,8]]], idx_dst=sbuf[p0:24, off=64, uint32, [[1,8]]], src=sbuf[p0:24, off=4096, bf16, [[1,2]]], n=42  # expected-error {{operand 'val_dst': 24 partitions; topk needs a multiple of 16 (one snake each)}}
# expected-error@-1 {{operand 'idx_dst': 24 partitions; topk needs a multiple of 16 (one snake each)}}
# expected-error@-2 {{operand 'src': 24 partitions; topk needs a multiple of 16 (one snake each)}}
# expected-error@-3 {{operand 'src': has 2 columns; a snake of n = 42 needs at least 3}}
[gpsimd] topk val_dst=sbuf[p0:16, off=0, bf16, [[1,8]]], idx_dst=sbuf[p0:16, off=64, uint32, [[1,8]]], src=sbuf[p0:16, off=4096, bf16, [[1,3]]], n=4  # expected-error {{operand 'n': 4 is outside [8, 65535]}}
# expected-error@-1 {{operand 'val_dst': K = 8 (its free size) must be in [1, min(n, 32767)] (n = 4)}}
# -----
# each GpSimd core keeps its rows: nonzero_with_count and topk outputs start on the src's partition
# chip: trn3
[gpsimd] nonzero_with_count dst=sbuf[p32:64, off=0, int32, [[1,65]]], src=sbuf[p0:32, off=4096, fp32, [[1,64]]]  # expected-error {{operand 'dst': starts at partition 32, the src at 0 (each GpSimd core keeps its rows)}}
[gpsimd] topk val_dst=sbuf[p32:64, off=0, bf16, [[1,8]]], idx_dst=sbuf[p0:32, off=64, uint32, [[1,8]]], src=sbuf[p0:32, off=4096, bf16, [[1,3]]], n=42  # expected-error {{operand 'val_dst': starts at partition 32, the src at 0 (each GpSimd core keeps its rows)}}
# -----
# rand2 runs on the vector engine only
# chip: trn3
[gpsimd] rand2 dst=sbuf[p0:128, off=0, fp32, [[1,512]]], min=0, max=1  # expected-error {{the gpsimd engine cannot execute rand2 (allowed: vector)}}
