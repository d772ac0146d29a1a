# Validation rules of every operand access pattern (docs/isa.md, "Every operand access
# pattern"): partitions, the start-partition rule, bounds, alignment, dims, which engine
# reaches which memory, dtypes.
# -----
# at most128 partitions
# chip: trn2
[vector] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]]
[vector] tensor_copy dst=sbuf[p0:129, off=0, fp32, [[1,512]]], src=sbuf[p0:129, off=4096, fp32, [[1,512]]]  # expected-error {{operand 'dst': 129 partitions; 1 to 128 are allowed}}
# expected-error@-1 {{operand 'src': 129 partitions; 1 to 128 are allowed}}
# -----
# start partition rule64
# chip: trn2
[vector] tensor_copy dst=sbuf[p64:128, off=0, fp32, [[1,8]]], src=sbuf[p64:128, off=64, fp32, [[1,8]]]
[vector] tensor_copy dst=sbuf[p32:96, off=0, fp32, [[1,8]]], src=sbuf[p64:128, off=64, fp32, [[1,8]]]  # expected-error {{operand 'dst': start partition 32 is not allowed for 64 partitions (65-128 partitions start at 0, 33-64 at 0 or 64, 1-32 at a multiple of 32)}}
# -----
# start partition rule32
# chip: trn2
[vector] tensor_copy dst=sbuf[p96:128, off=0, fp32, [[1,8]]], src=sbuf[p96:128, off=64, fp32, [[1,8]]]
[vector] tensor_copy dst=sbuf[p16:48, off=0, fp32, [[1,8]]], src=sbuf[p96:128, off=64, fp32, [[1,8]]]  # expected-error {{operand 'dst': start partition 16 is not allowed for 32 partitions (65-128 partitions start at 0, 33-64 at 0 or 64, 1-32 at a multiple of 32)}}
# -----
# start partition rule full
# chip: trn2
[vector] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]]
[vector] tensor_copy dst=sbuf[p0:100, off=0, fp32, [[1,8]]], src=sbuf[p28:128, off=64, fp32, [[1,8]]]  # expected-error {{operand 'src': start partition 28 is not allowed for 100 partitions (65-128 partitions start at 0, 33-64 at 0 or 64, 1-32 at a multiple of 32)}}
# -----
# partitions within the array
# chip: trn2
[vector] tensor_copy dst=sbuf[p96:128, off=0, fp32, [[1,8]]], src=sbuf[p96:128, off=64, fp32, [[1,8]]]
[vector] tensor_copy dst=sbuf[p96:160, off=0, fp32, [[1,8]]], src=sbuf[p96:160, off=64, fp32, [[1,8]]]  # expected-error {{operand 'dst': partitions 96..159 run past the last partition 127}}
# expected-error@-1 {{operand 'src': partitions 96..159 run past the last partition 127}}
# -----
# inside sbuf
# chip: trn2
[vector] tensor_copy dst=sbuf[p0:128, off=227328, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]]
[vector] tensor_copy dst=sbuf[p0:128, off=228352, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]]  # expected-error {{operand 'dst': bytes [228352, 230400) lie outside the 229376 bytes per partition of sbuf on NeuronCore-v3}}
# -----
# inside sbuf of the generation
# chip: trn3
[vector] tensor_copy dst=sbuf[p0:128, off=229376, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]]
# -----
# inside sbuf of the generation: not on trn1
# chip: trn1
[vector] tensor_copy dst=sbuf[p0:128, off=229376, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]]  # expected-error {{operand 'dst': bytes [229376, 231424) lie outside the 196608 bytes per partition of sbuf on NeuronCore-v2}}
# -----
# inside psum
# chip: trn2
[vector] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=psum[p0:128, off=14336, fp32, [[1,512]]]
[vector] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=psum[p0:128, off=15360, fp32, [[1,512]]]  # expected-error {{operand 'src': bytes [15360, 17408) lie outside the 16384 bytes per partition of psum on NeuronCore-v3}}
# -----
# natural alignment
# chip: trn2
[vector] tensor_copy dst=sbuf[p0:128, off=2, bf16, [[1,8]]], src=sbuf[p0:128, off=4096, fp32, [[1,8]]]
[vector] tensor_copy dst=sbuf[p0:128, off=2, fp32, [[1,8]]], src=sbuf[p0:128, off=4096, fp32, [[1,8]]]  # expected-error {{operand 'dst': offset 2 is not a multiple of the 4-byte float32 element}}
# -----
# no zero counts
# chip: trn2
[vector] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]]
[vector] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[8,0],[1,8]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]]  # expected-error {{operand 'dst': dimension 0 has count 0}}
# expected-error@-1 {{operand 'src': shape [128, 512] does not match dst [128, 0] (same partitions and elements per partition required)}}
# -----
# steps fit int16
# chip: trn2
[vector] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[32767,2],[1,4]]], src=sbuf[p0:128, off=4096, fp32, [[1,8]]]
[vector] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[32768,2],[1,4]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]]  # expected-error {{operand 'dst': dimension 0 step 32768 is outside the hardware range -32768..32767 (int16)}}
# expected-error@-1 {{operand 'src': shape [128, 512] does not match dst [128, 8] (same partitions and elements per partition required)}}
# -----
# one to four free dims
# chip: trn2
[vector] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]]
[vector] tensor_copy dst=sbuf[p0:128, off=0, fp32, []], src=sbuf[p0:128, off=4096, fp32, [[1,512]]]  # expected-error {{operand 'dst': 0 free dimensions; 1 to 4 are supported}}
# expected-error@-1 {{operand 'src': shape [128, 512] does not match dst [128, 1] (same partitions and elements per partition required)}}
# -----
# compute engines cannot reach hbm
# chip: trn2
[vector] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]]
[vector] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=hbm[p0:128x512, addr=0, fp32, [[1,512]]]  # expected-error {{operand 'src': the vector engine cannot access hbm (only DMA can)}}
# -----
# gp simd cannot reach psum
# chip: trn2
[gpsimd] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]]
[gpsimd] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=psum[p0:128, off=0, fp32, [[1,512]]]  # expected-error {{operand 'src': the gpsimd engine cannot access psum}}
# -----
# vector free size from psum
# chip: trn2
[vector] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,4096]]], src=psum[p0:128, off=0, fp32, [[1,4096]]]
[vector] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,8192]]], src=psum[p0:2, off=0, bf16, [[1,524288]]]  # expected-error {{operand 'src': free size 524288 exceeds the limit 4096 of the vector engine reading psum on NeuronCore-v3}}
# expected-error@-1 {{operand 'src': dimension 0 count 524288 exceeds the hardware limit 65535 (uint16)}}
# expected-error@-2 {{operand 'src': bytes [0, 1048576) lie outside the 16384 bytes per partition of psum on NeuronCore-v3}}
# expected-error@-3 {{operand 'src': shape [2, 524288] does not match dst [128, 8192] (same partitions and elements per partition required)}}
# -----
# no unpacked fp6
# chip: trn2
[vector] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]]
[vector] tensor_copy dst=sbuf[p0:128, off=0, float6_e3m2fn, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]]  # expected-error {{operand 'dst': dtype float6_e3m2fn is not an NKI tensor dtype (FP4/FP6 exist only x4-packed)}}
# -----
# packed mx only where allowed
# chip: trn3
[vector] memset dst=sbuf[p0:128, off=0, float8_e4m3fn_x4, [[1,128]]], value=0
[vector] tensor_copy dst=sbuf[p0:128, off=0, float8_e4m3fn_x4, [[1,128]]], src=sbuf[p0:128, off=4096, float8_e4m3fn_x4, [[1,128]]]  # expected-error {{operand 'dst': x4-packed dtype float8_e4m3fn_x4 cannot be used by tensor_copy}}
# expected-error@-1 {{operand 'src': x4-packed dtype float8_e4m3fn_x4 cannot be used by tensor_copy}}
# -----
# packed mx needs gen4
# chip: trn3
[vector] memset dst=sbuf[p0:128, off=0, float8_e4m3fn_x4, [[1,128]]], value=0
# -----
# packed mx needs gen4: not on trn2
# chip: trn2
[vector] memset dst=sbuf[p0:128, off=0, float8_e4m3fn_x4, [[1,128]]], value=0  # expected-error {{operand 'dst': dtype float8_e4m3fn_x4 needs NeuronCore-v4 or newer (this chip is NeuronCore-v3)}}
