# Validation rules of nc_matmul and nc_matmul_mx (docs/isa.md, "Per operation").
# -----
# matmul moving free limit gen3
# chip: trn2
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, bf16, [[1,128]]], moving=sbuf[p0:128, off=256, bf16, [[1,512]]]
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,1024]]], stationary=sbuf[p0:128, off=0, bf16, [[1,128]]], moving=sbuf[p0:128, off=256, bf16, [[1,1024]]]  # expected-error {{operand 'moving': free size 1024 exceeds the limit 512 of NeuronCore-v3 for a float32 output}}
# expected-error@-1 {{operand 'dst': bytes [0, 4096) cross a 2048-byte psum bank boundary; on NeuronCore-v3 a matmul output must lie within one bank}}
# -----
# matmul moving free limit gen4
# chip: trn3
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,4096]]], stationary=sbuf[p0:128, off=0, bf16, [[1,128]]], moving=sbuf[p0:128, off=256, bf16, [[1,4096]]]
# -----
# matmul moving free limit gen4: not on trn2
# chip: trn2
[tensor] nc_matmul dst=psum[p0:128, off=0, bf16, [[1,8192]]], stationary=sbuf[p0:128, off=0, bf16, [[1,128]]], moving=sbuf[p0:128, off=256, bf16, [[1,8192]]], tile_rows=128  # expected-error {{operand 'moving': free size 8192 exceeds the limit 512 of NeuronCore-v3 for a bfloat16 output}}
# expected-error@-1 {{operand 'dst': matmul output dtype bfloat16 is not supported on NeuronCore-v3 (float32)}}
# expected-error@-2 {{operand 'dst': bytes [0, 16384) cross a 2048-byte psum bank boundary; on NeuronCore-v3 a matmul output must lie within one bank}}
# -----
# matmul bf16 output gen4
# chip: trn3
[tensor] nc_matmul dst=psum[p0:128, off=0, bf16, [[1,8192]]], stationary=sbuf[p0:128, off=0, bf16, [[1,128]]], moving=sbuf[p0:128, off=256, bf16, [[1,8192]]]
# -----
# matmul bf16 output gen4: not on trn2
# chip: trn2
[tensor] nc_matmul dst=psum[p0:128, off=0, bf16, [[1,512]]], stationary=sbuf[p0:128, off=0, bf16, [[1,128]]], moving=sbuf[p0:128, off=256, bf16, [[1,512]]]  # expected-error {{operand 'dst': matmul output dtype bfloat16 is not supported on NeuronCore-v3 (float32)}}
# -----
# matmul dst in one psum bank
# chip: trn2
[tensor] nc_matmul dst=psum[p0:128, off=2048, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, bf16, [[1,128]]], moving=sbuf[p0:128, off=256, bf16, [[1,512]]]
[tensor] nc_matmul dst=psum[p0:128, off=1024, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, bf16, [[1,128]]], moving=sbuf[p0:128, off=256, bf16, [[1,512]]]  # expected-error {{operand 'dst': bytes [1024, 3072) cross a 2048-byte psum bank boundary; on NeuronCore-v3 a matmul output must lie within one bank}}
# -----
# matmul same contraction
# chip: trn2
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, bf16, [[1,128]]], moving=sbuf[p0:128, off=256, bf16, [[1,512]]]
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, bf16, [[1,128]]], moving=sbuf[p0:64, off=256, bf16, [[1,512]]]  # expected-error {{operand 'moving': contraction size (partitions) 64 differs from the stationary's 128}}
# -----
# matmul stationary free
# chip: trn2
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, bf16, [[1,128]]], moving=sbuf[p0:128, off=256, bf16, [[1,512]]]
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, bf16, [[1,256]]], moving=sbuf[p0:128, off=1024, bf16, [[1,512]]]  # expected-error {{operand 'stationary': free size 256 exceeds the limit 128 (PE columns in use) of NeuronCore-v3}}
# expected-error@-1 {{operand 'dst': shape [128, 512] does not match the product shape [256, 512] (stationary free x moving free)}}
# -----
# matmul dst in psum
# chip: trn2
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, bf16, [[1,128]]], moving=sbuf[p0:128, off=256, bf16, [[1,512]]]
[tensor] nc_matmul dst=sbuf[p0:128, off=8192, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, bf16, [[1,128]]], moving=sbuf[p0:128, off=256, bf16, [[1,512]]]  # expected-error {{operand 'dst': must be in psum, not sbuf}}
# -----
# matmul inputs in sbuf
# chip: trn2
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, bf16, [[1,128]]], moving=sbuf[p0:128, off=256, bf16, [[1,512]]]
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=psum[p0:128, off=4096, bf16, [[1,128]]], moving=sbuf[p0:128, off=256, bf16, [[1,512]]]  # expected-error {{operand 'stationary': must be in sbuf, not psum}}
# -----
# matmul input dtypes
# chip: trn2
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, bf16, [[1,128]]], moving=sbuf[p0:128, off=256, bf16, [[1,512]]]
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, int8, [[1,128]]], moving=sbuf[p0:128, off=256, int8, [[1,512]]]  # expected-error {{operand 'stationary': dtype int8 is not allowed here (allowed: float32, tfloat32, bfloat16, float16, float8_e4m3fn, float8_e4m3, float8_e5m2)}}
# expected-error@-1 {{operand 'moving': dtype int8 is not allowed here (allowed: float32, tfloat32, bfloat16, float16, float8_e4m3fn, float8_e4m3, float8_e5m2)}}
# -----
# matmul fp32 needs fp32 partner
# chip: trn2
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, fp32, [[1,128]]], moving=sbuf[p0:128, off=512, tf32, [[1,512]]]
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, fp32, [[1,128]]], moving=sbuf[p0:128, off=512, bf16, [[1,512]]]  # expected-error {{operand 'moving': float32 stationary with bfloat16 moving: a float32/tfloat32 input needs a float32/tfloat32 partner}}
# -----
# matmul dst shape
# chip: trn2
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, bf16, [[1,128]]], moving=sbuf[p0:128, off=256, bf16, [[1,512]]]
[tensor] nc_matmul dst=psum[p0:64, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, bf16, [[1,128]]], moving=sbuf[p0:128, off=256, bf16, [[1,512]]]  # expected-error {{operand 'dst': shape [64, 512] does not match the product shape [128, 512] (stationary free x moving free)}}
# -----
# matmul row tiling
# chip: trn2
[tensor] nc_matmul dst=psum[p0:32, off=0, fp32, [[1,512]]], stationary=sbuf[p32:64, off=0, bf16, [[1,32]]], moving=sbuf[p32:64, off=256, bf16, [[1,512]]], tile_row=32, tile_col=96, tile_rows=32, tile_cols=32
[tensor] nc_matmul dst=psum[p0:64, off=0, fp32, [[1,512]]], stationary=sbuf[p0:64, off=0, bf16, [[1,64]]], moving=sbuf[p0:64, off=256, bf16, [[1,512]]], tile_row=32, tile_rows=64  # expected-error {{operand 'tile_row': tile position 32 must be a multiple of the tile size 64 within the 128 PE rows/columns}}
# -----
# matmul32 tiles need gen3
# chip: trn2
[tensor] nc_matmul dst=psum[p0:32, off=0, fp32, [[1,512]]], stationary=sbuf[p0:32, off=0, bf16, [[1,32]]], moving=sbuf[p0:32, off=256, bf16, [[1,512]]], tile_rows=32, tile_cols=32
# -----
# matmul32 tiles need gen3: not on trn1
# chip: trn1
[tensor] nc_matmul dst=psum[p0:32, off=0, fp32, [[1,512]]], stationary=sbuf[p0:32, off=0, bf16, [[1,32]]], moving=sbuf[p0:32, off=256, bf16, [[1,512]]], tile_rows=32, tile_cols=32  # expected-error {{operand 'tile_rows': a 32-wide tile needs NeuronCore-v3 or newer (this chip is NeuronCore-v2)}}
# expected-error@-1 {{operand 'tile_cols': a 32-wide tile needs NeuronCore-v3 or newer (this chip is NeuronCore-v2)}}
# -----
# matmul contraction within row tile
# chip: trn2
[tensor] nc_matmul dst=psum[p0:64, off=0, fp32, [[1,512]]], stationary=sbuf[p0:64, off=0, bf16, [[1,64]]], moving=sbuf[p0:64, off=256, bf16, [[1,512]]], tile_rows=64
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, bf16, [[1,128]]], moving=sbuf[p0:128, off=256, bf16, [[1,512]]], tile_rows=64  # expected-error {{operand 'stationary': contraction size 128 exceeds the 64 PE rows in use}}
# -----
# matmul double row fp8
# chip: trn2
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, fp8_e4m3, [[128,2],[1,128]]], moving=sbuf[p0:128, off=256, fp8_e5m2, [[512,2],[1,512]]], perf_mode=double_row
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, bf16, [[128,2],[1,128]]], moving=sbuf[p0:128, off=512, bf16, [[512,2],[1,512]]], perf_mode=double_row  # expected-error {{operand 'perf_mode': double_row needs float8 stationary and moving}}
# -----
# matmul double row generation
# chip: trn2
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, fp8_e4m3, [[128,2],[1,128]]], moving=sbuf[p0:128, off=256, fp8_e5m2, [[512,2],[1,512]]], perf_mode=double_row
# -----
# matmul double row generation: not on trn1
# chip: trn1
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, fp8_e4m3, [[128,2],[1,128]]], moving=sbuf[p0:128, off=256, fp8_e5m2, [[512,2],[1,512]]], perf_mode=double_row  # expected-error {{operand 'perf_mode': double_row is not available on NeuronCore-v2}}
# -----
# matmul transpose keeps bf16
# chip: trn2
[tensor] nc_matmul dst=psum[p0:128, off=0, bf16, [[1,128]]], stationary=sbuf[p0:128, off=0, bf16, [[1,128]]], moving=sbuf[p0:128, off=256, bf16, [[1,128]]], is_transpose=true
[tensor] nc_matmul dst=psum[p0:128, off=0, bf16, [[1,128]]], stationary=sbuf[p0:128, off=0, bf16, [[1,128]]], moving=sbuf[p0:128, off=256, bf16, [[1,128]]]  # expected-error {{operand 'dst': matmul output dtype bfloat16 is not supported on NeuronCore-v3 (float32)}}
# -----
# matmul transpose moves exactly
# chip: trn3
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,128]]], stationary=sbuf[p0:128, off=0, bf16, [[1,128]]], moving=sbuf[p0:128, off=256, bf16, [[1,128]]], is_transpose=true
[tensor] nc_matmul dst=psum[p0:128, off=0, bf16, [[1,128]]], stationary=sbuf[p0:128, off=0, fp32, [[1,128]]], moving=sbuf[p0:128, off=512, fp32, [[1,128]]], is_transpose=true  # expected-error {{operand 'dst': a transpose cannot move float32 into bfloat16 exactly}}
# -----
# matmul mx needs gen4
# chip: trn3
[tensor] nc_matmul_mx dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, float8_e4m3fn_x4, [[1,128]]], moving=sbuf[p0:128, off=512, float8_e5m2_x4, [[1,512]]], stationary_scale=sbuf[p0:128, off=2560, uint8, [[1,128]]], moving_scale=sbuf[p0:128, off=3072, uint8, [[1,512]]]
# -----
# matmul mx needs gen4: not on trn2
# chip: trn2
[tensor] nc_matmul_mx dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, float8_e4m3fn_x4, [[1,128]]], moving=sbuf[p0:128, off=512, float8_e5m2_x4, [[1,512]]], stationary_scale=sbuf[p0:128, off=2560, uint8, [[1,128]]], moving_scale=sbuf[p0:128, off=3072, uint8, [[1,512]]]  # expected-error {{nc_matmul_mx needs the MX tensor engine of NeuronCore-v4 (not on NeuronCore-v3)}}
# expected-error@-1 {{operand 'stationary': dtype float8_e4m3fn_x4 needs NeuronCore-v4 or newer (this chip is NeuronCore-v3)}}
# expected-error@-2 {{operand 'moving': dtype float8_e5m2_x4 needs NeuronCore-v4 or newer (this chip is NeuronCore-v3)}}
# -----
# matmul mx partitions multiple of32
# chip: trn3
[tensor] nc_matmul_mx dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:64, off=0, float8_e4m3fn_x4, [[1,128]]], moving=sbuf[p0:64, off=512, float8_e5m2_x4, [[1,512]]], stationary_scale=sbuf[p0:64, off=2560, uint8, [[1,128]]], moving_scale=sbuf[p0:64, off=3072, uint8, [[1,512]]]
[tensor] nc_matmul_mx dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:48, off=0, float8_e4m3fn_x4, [[1,128]]], moving=sbuf[p0:48, off=512, float8_e5m2_x4, [[1,512]]], stationary_scale=sbuf[p0:48, off=2560, uint8, [[1,128]]], moving_scale=sbuf[p0:48, off=3072, uint8, [[1,512]]]  # expected-error {{operand 'stationary': 48 partitions; nc_matmul_mx needs a multiple of 32 (8-partition scale groups per quadrant)}}
# -----
# matmul mx scale dtype
# chip: trn3
[tensor] nc_matmul_mx dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, float8_e4m3fn_x4, [[1,128]]], moving=sbuf[p0:128, off=512, float8_e5m2_x4, [[1,512]]], stationary_scale=sbuf[p0:128, off=2560, float8_e8m0fnu, [[1,128]]], moving_scale=sbuf[p0:128, off=3072, float8_e8m0fnu, [[1,512]]]
[tensor] nc_matmul_mx dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, float8_e4m3fn_x4, [[1,128]]], moving=sbuf[p0:128, off=512, float8_e5m2_x4, [[1,512]]], stationary_scale=sbuf[p0:128, off=2560, fp32, [[1,128]]], moving_scale=sbuf[p0:128, off=3072, fp32, [[1,512]]]  # expected-error {{operand 'stationary_scale': dtype float32 is not allowed here (allowed: float8_e8m0fnu, uint8)}}
# expected-error@-1 {{operand 'moving_scale': dtype float32 is not allowed here (allowed: float8_e8m0fnu, uint8)}}
# -----
# matmul fp8 e4m3 flavours: the OCP float8_e4m3fn is a matmul input from NeuronCore-v4 on
# chip: trn2
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, float8_e4m3, [[1,128]]], moving=sbuf[p0:128, off=256, float8_e5m2, [[1,512]]]
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, float8_e4m3fn, [[1,128]]], moving=sbuf[p0:128, off=256, float8_e5m2, [[1,512]]]  # expected-error {{operand 'stationary': a float8_e4m3fn (OCP) matmul input needs NeuronCore-v4 or newer (this chip is NeuronCore-v3)}}
# -----
# matmul fp8 e4m3 flavours: legacy and OCP E4M3 do not mix in one matmul
# chip: trn3
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, float8_e4m3fn, [[1,128]]], moving=sbuf[p0:128, off=256, float8_e4m3fn, [[1,512]]]
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, float8_e4m3, [[1,128]]], moving=sbuf[p0:128, off=256, float8_e5m2, [[1,512]]]
[tensor] nc_matmul dst=psum[p0:128, off=0, fp32, [[1,512]]], stationary=sbuf[p0:128, off=0, float8_e4m3, [[1,128]]], moving=sbuf[p0:128, off=256, float8_e4m3fn, [[1,512]]]  # expected-error {{operand 'moving': float8_e4m3 stationary with float8_e4m3fn moving: the legacy float8_e4m3 and the OCP float8_e4m3fn cannot be mixed in one matmul}}
