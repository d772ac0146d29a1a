# Validation rules of the Vector, Scalar and GpSimd operations (docs/isa.md, "Per
# operation").
# -----
# shapes match
# chip: trn2
[vector] tensor_tensor dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data1=sbuf[p0:128, off=4096, fp32, [[1,512]]], data2=sbuf[p0:128, off=4096, fp32, [[1,512]]], op=add
[vector] tensor_tensor dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data1=sbuf[p0:128, off=4096, fp32, [[1,512]]], data2=sbuf[p0:64, off=4096, fp32, [[1,512]]], op=add  # expected-error {{operand 'data2': shape [64, 512] does not match dst [128, 512] (same partitions and elements per partition required)}}
# -----
# bitvec needs integers
# chip: trn2
[vector] tensor_tensor dst=sbuf[p0:128, off=8192, int32, [[1,512]]], data1=sbuf[p0:128, off=12288, int32, [[1,512]]], data2=sbuf[p0:128, off=12288, int32, [[1,512]]], op=bitwise_and
[vector] tensor_tensor dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data1=sbuf[p0:128, off=4096, fp32, [[1,512]]], data2=sbuf[p0:128, off=4096, fp32, [[1,512]]], op=bitwise_and  # expected-error {{operand 'data1': dtype float32 is not an integer type, as bitvec operator bitwise_and requires}}
# expected-error@-1 {{operand 'dst': dtype float32 is not an integer type, as bitvec operator bitwise_and requires}}
# expected-error@-2 {{operand 'data2': dtype float32 is not an integer type, as bitvec operator bitwise_and requires}}
# -----
# power runs on gp simd
# chip: trn2
[gpsimd] tensor_tensor dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data1=sbuf[p0:128, off=4096, fp32, [[1,512]]], data2=sbuf[p0:128, off=4096, fp32, [[1,512]]], op=power
[vector] tensor_tensor dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data1=sbuf[p0:128, off=4096, fp32, [[1,512]]], data2=sbuf[p0:128, off=4096, fp32, [[1,512]]], op=power  # expected-error {{tensor_tensor with power runs only on gpsimd (queued on vector)}}
# -----
# inputs not both in psum
# chip: trn2
[vector] tensor_tensor dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data1=psum[p0:128, off=0, fp32, [[1,512]]], data2=sbuf[p0:128, off=4096, fp32, [[1,512]]], op=add
[vector] tensor_tensor dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data1=psum[p0:128, off=0, fp32, [[1,512]]], data2=psum[p0:128, off=2048, fp32, [[1,512]]], op=add  # expected-error {{operand 'data2': 'data1' and 'data2' may not both be in psum}}
# -----
# average only in partition reduce
# chip: trn2
[gpsimd] tensor_partition_reduce dst=sbuf[p0:1, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], op=average
[vector] tensor_tensor dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data1=sbuf[p0:128, off=4096, fp32, [[1,512]]], data2=sbuf[p0:128, off=4096, fp32, [[1,512]]], op=average  # expected-error {{operand 'op': operator average is only available in tensor_partition_reduce}}
# -----
# partition reduce ops
# chip: trn2
[gpsimd] tensor_partition_reduce dst=sbuf[p0:1, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]]
[gpsimd] tensor_partition_reduce dst=sbuf[p0:1, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], op=multiply  # expected-error {{operand 'op': operator multiply is not allowed here (allowed: add, average, maximum, bitwise_or, bitwise_and)}}
# -----
# scalar engine tensor scalar pairs
# chip: trn2
[scalar] tensor_scalar dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], op0=multiply, operand0=2, op1=add
[scalar] tensor_scalar dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], op0=subtract, operand0=2  # expected-error {{operand 'op0': the scalar engine of NeuronCore-v3 supports only (multiply, add), (multiply, bypass) and (add, bypass), not (subtract, bypass)}}
# -----
# per partition operand
# chip: trn2
[vector] tensor_scalar dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], operand0=sbuf[p0:128, off=16384, fp32, [[1,1]]]
[vector] tensor_scalar dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], operand0=sbuf[p0:128, off=16384, fp32, [[1,2]]]  # expected-error {{operand 'operand0': a per-partition operand must have shape [128, 1], not [128, 2]}}
# -----
# bitvec tensor scalar on vector
# chip: trn2
[vector] tensor_scalar dst=sbuf[p0:128, off=8192, int32, [[1,512]]], data=sbuf[p0:128, off=12288, int32, [[1,512]]], op0=left_shift, operand0=1
[gpsimd] tensor_scalar dst=sbuf[p0:128, off=8192, int32, [[1,512]]], data=sbuf[p0:128, off=12288, int32, [[1,512]]], op0=left_shift, operand0=1  # expected-error {{tensor_scalar with a bitvec operator runs only on vector (queued on gpsimd)}}
# -----
# tensor reduce axes
# chip: trn2
[vector] tensor_reduce dst=sbuf[p0:128, off=8192, fp32, [[1,2]]], data=sbuf[p0:128, off=0, fp32, [[512,2],[1,512]]]
[vector] tensor_reduce dst=sbuf[p0:128, off=8192, fp32, [[1,2]]], data=sbuf[p0:128, off=0, fp32, [[512,2],[1,512]]], axes=3  # expected-error {{operand 'axes': 3 reduced axes; data has 2 free dims}}
# -----
# tensor reduce dst shape
# chip: trn2
[vector] tensor_reduce dst=sbuf[p0:128, off=8192, fp32, [[1,1]]], data=sbuf[p0:128, off=0, fp32, [[512,2],[1,512]]], axes=2
[vector] tensor_reduce dst=sbuf[p0:128, off=8192, fp32, [[1,4]]], data=sbuf[p0:128, off=0, fp32, [[512,2],[1,512]]]  # expected-error {{operand 'dst': has 4 elements per partition; the data's free size over the reduced axes needs 2}}
# -----
# bn stats free limit
# chip: trn2
[vector] bn_stats dst=sbuf[p0:128, off=8192, fp32, [[1,6]]], data=sbuf[p0:128, off=0, fp32, [[1,512]]]
[vector] bn_stats dst=sbuf[p0:128, off=8192, fp32, [[1,6]]], data=sbuf[p0:128, off=0, fp32, [[1,1024]]]  # expected-error {{operand 'data': free size 1024 exceeds the limit 512 (bn_stats_fmax) of NeuronCore-v3}}
# -----
# bn stats six outputs
# chip: trn2
[vector] bn_stats dst=sbuf[p0:128, off=8192, fp32, [[1,6]]], data=sbuf[p0:128, off=0, fp32, [[1,512]]]
[vector] bn_stats dst=sbuf[p0:128, off=8192, fp32, [[1,4]]], data=sbuf[p0:128, off=0, fp32, [[1,512]]]  # expected-error {{operand 'dst': has 4 elements per partition; bn_stats (count, mean, count*var for even and odd elements) needs 6}}
# -----
# bn aggr triples
# chip: trn2
[vector] bn_aggr dst=sbuf[p0:128, off=8192, fp32, [[1,2]]], data=sbuf[p0:128, off=0, fp32, [[1,12]]]
[vector] bn_aggr dst=sbuf[p0:128, off=8192, fp32, [[1,2]]], data=sbuf[p0:128, off=0, fp32, [[1,10]]]  # expected-error {{operand 'data': free size 10 is not a multiple of 3 (bn_stats triples)}}
# -----
# memset value fits dtype
# chip: trn2
[vector] memset dst=sbuf[p0:128, off=0, int8, [[1,16]]], value=-128
[vector] memset dst=sbuf[p0:128, off=0, int8, [[1,16]]], value=300  # expected-error {{operand 'value': 300 is not representable in int8 (value must match the dst dtype)}}
# -----
# memset packed only zero
# chip: trn3
[vector] memset dst=sbuf[p0:128, off=0, float8_e4m3fn_x4, [[1,16]]], value=0
[vector] memset dst=sbuf[p0:128, off=0, float8_e4m3fn_x4, [[1,16]]], value=1  # expected-error {{operand 'value': x4-packed destinations can only be set to 0}}
# -----
# range select needs gen3
# chip: trn2
[vector] range_select dst=sbuf[p0:128, off=0, fp32, [[1,512]]], on_true=sbuf[p0:128, off=4096, fp32, [[1,512]]], bound0=sbuf[p0:128, off=16384, fp32, [[1,1]]]
# -----
# range select needs gen3: not on trn1
# chip: trn1
[vector] range_select dst=sbuf[p0:128, off=0, fp32, [[1,512]]], on_true=sbuf[p0:128, off=4096, fp32, [[1,512]]]  # expected-error {{range_select needs NeuronCore-v3 or newer (this chip is NeuronCore-v2)}}
# -----
# range select on false is fp32 min
# chip: trn2
[vector] range_select dst=sbuf[p0:128, off=0, fp32, [[1,512]]], on_true=sbuf[p0:128, off=4096, fp32, [[1,512]]]
[vector] range_select dst=sbuf[p0:128, off=0, fp32, [[1,512]]], on_true=sbuf[p0:128, off=4096, fp32, [[1,512]]], on_false_value=0  # expected-error {{operand 'on_false_value': must be the lowest float32 (-3.4028235e+38), as the hardware reduction assumes}}
# -----
# exponential needs gen4
# chip: trn3
[vector] exponential dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]]
# -----
# exponential needs gen4: not on trn2
# chip: trn2
[vector] exponential dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]]  # expected-error {{exponential needs NeuronCore-v4 or newer (this chip is NeuronCore-v3)}}
# -----
# activation constant bias gen3
# chip: trn2
[scalar] activation dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], func=exp, bias=1.5
# -----
# activation constant bias gen3: not on trn1
# chip: trn1
[scalar] activation dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], func=exp, bias=1.5  # expected-error {{operand 'bias': a constant activation bias needs NeuronCore-v3 or newer (this chip is NeuronCore-v2)}}
# -----
# activation scale fp32
# chip: trn2
[scalar] activation dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], scale=sbuf[p0:128, off=16384, fp32, [[1,1]]]
[scalar] activation dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], scale=sbuf[p0:128, off=16384, bf16, [[1,1]]]  # expected-error {{operand 'scale': dtype bfloat16 is not allowed here (allowed: float32)}}
# -----
# scalar tensor copy needs gen3
# chip: trn2
[scalar] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]]
# -----
# scalar tensor copy needs gen3: not on trn1
# chip: trn1
[scalar] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]]  # expected-error {{tensor_copy on the scalar engine needs NeuronCore-v3 or newer (this chip is NeuronCore-v2)}}
# -----
# vector transpose limit
# chip: trn2
[vector] nc_transpose dst=sbuf[p0:32, off=0, fp32, [[1,16]]], data=sbuf[p0:16, off=4096, fp32, [[1,32]]]
[vector] nc_transpose dst=sbuf[p0:32, off=0, bf16, [[1,16]]], data=sbuf[p0:16, off=4096, fp32, [[1,32]]]  # expected-error {{operand 'dst': dtype bfloat16 differs from the data's float32 (a transpose does not cast)}}
[vector] nc_transpose dst=sbuf[p0:64, off=0, fp32, [[1,16]]], data=sbuf[p0:16, off=4096, fp32, [[1,64]]]  # expected-error {{operand 'data': shape [16, 64] exceeds the vector-engine transpose limit [32, 32]}}
# expected-error@-1 {{operand 'dst': shape [64, 16] exceeds the vector-engine transpose limit [32, 32]}}
# -----
# tensor transpose shape
# chip: trn2
[tensor] nc_transpose dst=psum[p0:64, off=0, bf16, [[1,128]]], data=sbuf[p0:128, off=0, bf16, [[1,64]]]
[tensor] nc_transpose dst=psum[p0:128, off=0, bf16, [[1,64]]], data=sbuf[p0:128, off=0, bf16, [[1,64]]]  # expected-error {{operand 'dst': shape [128, 64] is not the transpose of the data's [128, 64]}}
# -----
# select predicate dtype
# chip: trn2
[vector] select dst=sbuf[p0:128, off=0, fp32, [[1,512]]], predicate=sbuf[p0:128, off=8192, uint8, [[1,512]]], on_true=sbuf[p0:128, off=4096, fp32, [[1,512]]]
[vector] select dst=sbuf[p0:128, off=0, fp32, [[1,512]]], predicate=sbuf[p0:128, off=8192, fp32, [[1,512]]], on_true=sbuf[p0:128, off=4096, fp32, [[1,512]]]  # expected-error {{operand 'predicate': dtype float32 is not allowed here (allowed: int8, uint8, int16, uint16)}}
# -----
# find index8 outputs
# chip: trn2
[vector] nc_find_index8 dst=sbuf[p0:128, off=8192, uint32, [[1,8]]], data=sbuf[p0:128, off=0, fp32, [[1,512]]], vals=sbuf[p0:128, off=4096, fp32, [[1,8]]]
[vector] nc_find_index8 dst=sbuf[p0:128, off=8192, fp32, [[1,8]]], data=sbuf[p0:128, off=0, fp32, [[1,512]]], vals=sbuf[p0:128, off=4096, fp32, [[1,8]]]  # expected-error {{operand 'dst': dtype float32 is not allowed here (allowed: uint16, uint32)}}
# -----
# max8 source size
# chip: trn2
[vector] max8 dst=sbuf[p0:128, off=8192, fp32, [[1,8]]], src=sbuf[p0:128, off=0, fp32, [[1,512]]]
[vector] max8 dst=sbuf[p0:128, off=8192, fp32, [[1,8]]], src=sbuf[p0:128, off=0, fp32, [[1,4]]]  # expected-error {{operand 'src': free size 4 must be within 8..16384}}
# -----
# iota pattern covers dst
# chip: trn2
[gpsimd] iota dst=sbuf[p0:128, off=0, int32, [[1,512]]], pattern=[[1,512]]
[gpsimd] iota dst=sbuf[p0:128, off=0, int32, [[1,512]]], pattern=[[1,256]]  # expected-error {{operand 'pattern': covers 256 elements per partition; dst has 512}}
# -----
# local gather elements per index
# chip: trn2
[gpsimd] local_gather dst=sbuf[p0:128, off=0, fp32, [[1,64]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]], index=sbuf[p0:128, off=8192, uint16, [[1,16]]], num_elem_per_idx=4
[gpsimd] local_gather dst=sbuf[p0:128, off=0, fp32, [[1,48]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]], index=sbuf[p0:128, off=8192, uint16, [[1,16]]], num_elem_per_idx=3  # expected-error {{operand 'num_elem_per_idx': 3 is not one of 1, 2, 4, 8, 16, 32}}
# -----
# shuffle mask entries
# chip: trn2
[vector] nc_stream_shuffle dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]], mask=[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31]
[vector] nc_stream_shuffle dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]], mask=[40,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,255]  # expected-error {{operand 'mask': entry 0 is 40: a source partition 0..31 within the quadrant, or 255}}
# -----
# quantize mx source
# chip: trn3
[vector] quantize_mx dst=sbuf[p0:32, off=0, float8_e4m3fn_x4, [[1,128]]], src=sbuf[p0:32, off=4096, bf16, [[1,512]]], dst_scale=sbuf[p0:32, off=8192, uint8, [[1,128]]]
[vector] quantize_mx dst=sbuf[p0:32, off=0, float8_e4m3fn_x4, [[1,128]]], src=sbuf[p0:32, off=4096, fp32, [[1,512]]], dst_scale=sbuf[p0:32, off=8192, uint8, [[1,128]]]  # expected-error {{operand 'src': dtype float32 is not allowed here (allowed: bfloat16, float16)}}
# -----
# rng state needs gen3
# chip: trn2
[gpsimd] rand_get_state dst=sbuf[p0:128, off=0, uint32, [[1,6]]]
# -----
# rng state needs gen3: not on trn1
# chip: trn1
[gpsimd] rand_get_state dst=sbuf[p0:128, off=0, uint32, [[1,6]]]  # expected-error {{rand_get_state needs NeuronCore-v3 or newer (this chip is NeuronCore-v2)}}
# -----
# custom op in sbuf
# chip: trn2
[gpsimd] custom_op op="topk", outputs=[sbuf[p0:128, off=0, fp32, [[1,512]]]], inputs=[sbuf[p0:128, off=4096, fp32, [[1,512]]]]
[gpsimd] custom_op op="topk", outputs=[sbuf[p0:128, off=0, fp32, [[1,512]]]], inputs=[hbm[p0:128x512, addr=0, fp32, [[1,512]]]]  # expected-error {{operand 'inputs[0]': must be in sbuf, not hbm}}
# expected-error@-1 {{operand 'inputs[0]': the gpsimd engine cannot access hbm (only DMA can)}}
# -----
# scalar tensor tensor shapes match
[vector] scalar_tensor_tensor dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], op0=multiply, operand0=sbuf[p0:128, off=16384, fp32, [[1,1]]], op1=add, operand1=sbuf[p0:128, off=8192, fp32, [[1,512]]]
[vector] scalar_tensor_tensor dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], op0=multiply, operand0=sbuf[p0:128, off=16384, fp32, [[1,1]]], op1=add, operand1=sbuf[p0:64, off=8192, fp32, [[1,512]]]  # expected-error {{operand 'operand1': shape [64, 512] does not match dst [128, 512]}}
# -----
# tensor tensor scan initial per partition
[vector] tensor_tensor_scan dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data0=sbuf[p0:128, off=4096, fp32, [[1,512]]], data1=sbuf[p0:128, off=8192, fp32, [[1,512]]], initial=sbuf[p0:128, off=16384, fp32, [[1,1]]], op0=multiply, op1=add
[vector] tensor_tensor_scan dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data0=sbuf[p0:128, off=4096, fp32, [[1,512]]], data1=sbuf[p0:128, off=8192, fp32, [[1,512]]], initial=sbuf[p0:128, off=16384, fp32, [[1,2]]], op0=multiply, op1=add  # expected-error {{operand 'initial': a per-partition operand must have shape [128, 1], not [128, 2]}}
# -----
# reciprocal shapes match
[vector] reciprocal dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]]
[vector] reciprocal dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:64, off=8192, fp32, [[1,512]]]  # expected-error {{operand 'data': shape [64, 512] does not match dst [128, 512]}}
# -----
# affine select pattern covers dst
[gpsimd] affine_select dst=sbuf[p0:128, off=0, fp32, [[1,512]]], on_true=sbuf[p0:128, off=4096, fp32, [[1,512]]], pattern=[[1,512]], cmp_op=greater_equal
[gpsimd] affine_select dst=sbuf[p0:128, off=0, fp32, [[1,512]]], on_true=sbuf[p0:128, off=4096, fp32, [[1,512]]], pattern=[[1,256]], cmp_op=greater_equal  # expected-error {{operand 'pattern': covers 256 elements per partition; dst has 512}}
# -----
# rand2 min below max
# chip: trn3
[vector] rand2 dst=sbuf[p0:128, off=0, fp32, [[1,512]]], min=0, max=1
[vector] rand2 dst=sbuf[p0:128, off=0, fp32, [[1,512]]], min=1, max=0  # expected-error {{operand 'max': range [1, 0) is empty}}
# -----
# rand set state six words on gpsimd
[gpsimd] rand_set_state src_seeds=sbuf[p0:128, off=0, uint32, [[1,6]]]
[gpsimd] rand_set_state src_seeds=sbuf[p0:128, off=0, uint32, [[1,5]]]  # expected-error {{operand 'src_seeds': has 5 elements per partition; the gpsimd engine's XORWOW state needs 6}}
# -----
# tensor scalar reduce arithmetic op0
# chip: trn2
[vector] tensor_scalar_reduce dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], op0=subtract, operand0=2, reduce_op=maximum, reduce_res=sbuf[p0:128, off=16384, fp32, [[1,1]]]
[vector] tensor_scalar_reduce dst=sbuf[p0:128, off=8192, int32, [[1,512]]], data=sbuf[p0:128, off=12288, int32, [[1,512]]], op0=bitwise_and, operand0=1  # expected-error {{operand 'op0': tensor_scalar_reduce takes arithmetic operators only, not bitwise_and}}
# -----
# tensor scalar reduce reductions
# chip: trn2
[vector] tensor_scalar_reduce dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], reduce_op=multiply
[vector] tensor_scalar_reduce dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], reduce_op=subtract  # expected-error {{operand 'reduce_op': operator subtract is not allowed here (allowed: add, multiply, maximum, minimum)}}
# -----
# tensor scalar reduce three free dims
# chip: trn2
[vector] tensor_scalar_reduce dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[256,2],[16,16],[1,16]]]
[vector] tensor_scalar_reduce dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[256,2],[64,4],[16,4],[1,16]]]  # expected-error {{operand 'data': 4 free dims; tensor_scalar_reduce takes at most 3}}
# -----
# tensor scalar reduce result per partition
# chip: trn2
[vector] tensor_scalar_reduce dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], reduce_res=sbuf[p0:128, off=16384, fp32, [[1,2]]]  # expected-error {{operand 'reduce_res': a per-partition operand must have shape [128, 1], not [128, 2]}}
# -----
# copy predicated predicate dtype
# chip: trn2
[vector] tensor_copy_predicated dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]], predicate=sbuf[p0:128, off=8192, uint32, [[1,512]]]
[vector] tensor_copy_predicated dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]], predicate=sbuf[p0:128, off=8192, int8, [[1,512]]]  # expected-error {{operand 'predicate': dtype int8 is not allowed here (allowed: uint8, uint16, uint32)}}
# -----
# copy predicated no cast
# chip: trn2
[vector] tensor_copy_predicated dst=sbuf[p0:128, off=0, bf16, [[1,512]]], src=psum[p0:128, off=0, bf16, [[1,512]]], predicate=sbuf[p0:128, off=8192, uint8, [[1,512]]]
[vector] tensor_copy_predicated dst=sbuf[p0:128, off=0, bf16, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]], predicate=sbuf[p0:128, off=8192, uint8, [[1,512]]]  # expected-error {{operand 'src': dtype float32 differs from the dst's bfloat16 (tensor_copy_predicated does not cast)}}
# -----
# copy predicated src and predicate not both in psum
# chip: trn2
[vector] tensor_copy_predicated dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=psum[p0:128, off=0, fp32, [[1,512]]], predicate=psum[p0:128, off=2048, uint8, [[1,512]]]  # expected-error {{operand 'src': 'predicate' and 'src' may not both be in psum}}
# -----
# copy predicated shapes
# chip: trn2
[vector] tensor_copy_predicated dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:64, off=4096, fp32, [[1,512]]], predicate=sbuf[p0:128, off=8192, uint8, [[1,256]]]  # expected-error {{operand 'predicate': shape [128, 256] does not match dst [128, 512]}}
# expected-error@-1 {{operand 'src': shape [64, 512] does not match dst [128, 512]}}
# -----
# copy predicated immediate fits the dst
# chip: trn2
[vector] tensor_copy_predicated dst=sbuf[p0:128, off=0, int8, [[1,512]]], src_value=-128, predicate=sbuf[p0:128, off=8192, uint8, [[1,512]]]
[vector] tensor_copy_predicated dst=sbuf[p0:128, off=0, int8, [[1,512]]], src_value=0.5, predicate=sbuf[p0:128, off=8192, uint8, [[1,512]]]  # expected-error {{operand 'src_value': 0.5 is not representable in int8 (value must match the dst dtype)}}
[vector] tensor_copy_predicated dst=sbuf[p0:128, off=0, int8, [[1,512]]], src=sbuf[p0:128, off=4096, int8, [[1,512]]], src_value=1, predicate=sbuf[p0:128, off=8192, uint8, [[1,512]]]  # expected-error {{operand 'src_value': an immediate and a src tensor both given}}
# -----
# match replace8 data size
# chip: trn2
[vector] nc_match_replace8 dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], vals=sbuf[p0:128, off=8192, fp32, [[1,8]]], imm=-1
[vector] nc_match_replace8 dst=sbuf[p0:128, off=0, bf16, [[1,20000]]], data=sbuf[p0:128, off=40000, bf16, [[1,20000]]], vals=sbuf[p0:128, off=80000, fp32, [[1,8]]]  # expected-error {{operand 'data': free size 20000 exceeds the limit 16384 (nc_match_replace8 data) of NeuronCore-v3}}
# -----
# match replace8 vals and dst
# chip: trn2
[vector] nc_match_replace8 dst=sbuf[p0:128, off=0, fp32, [[1,256]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], vals=sbuf[p0:128, off=8192, fp32, [[1,4]]]  # expected-error {{operand 'dst': shape [128, 256] does not match data [128, 512]}}
# expected-error@-1 {{operand 'vals': has 4 elements per partition; nc_match_replace8 needs 8}}
# -----
# match replace8 indices
# chip: trn2
[vector] nc_match_replace8 dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], vals=sbuf[p0:128, off=8192, fp32, [[1,8]]], dst_idx=sbuf[p0:128, off=12288, uint16, [[1,8]]]
[vector] nc_match_replace8 dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], vals=sbuf[p0:128, off=8192, fp32, [[1,8]]], dst_idx=sbuf[p0:128, off=12288, int32, [[1,8]]]  # expected-error {{operand 'dst_idx': dtype int32 is not allowed here (allowed: uint16, uint32)}}
# -----
# activate2 needs gen4
# chip: trn3
[scalar] activate2 dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], func=exp, op0=multiply, imm0=sbuf[p0:128, off=16384, fp32, [[1,1]]], op1=subtract, imm1=0.5, reduce_op=maximum, reduce_res=sbuf[p0:128, off=16388, fp32, [[1,1]]]
# -----
# activate2 needs gen4: not on trn2
# chip: trn2
[scalar] activate2 dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], func=exp  # expected-error {{activate2 needs NeuronCore-v4 or newer (this chip is NeuronCore-v3)}}
# -----
# activate2 stage pairs
# chip: trn3
[scalar] activate2 dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], op0=subtract, imm0=1, reverse0=true
[scalar] activate2 dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], op0=add, imm0=1, op1=multiply, imm1=2  # expected-error {{operand 'op0': (add, multiply) is not one of activate2's stages}}
# -----
# activate2 reverse needs an operator
# chip: trn3
[scalar] activate2 dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], op0=multiply, imm0=2, reverse1=true  # expected-error {{operand 'reverse1': reverse1 needs an op1 other than bypass}}
# -----
# activate2 immediates share a dtype
# chip: trn3
[scalar] activate2 dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], op0=multiply, imm0=sbuf[p0:128, off=16384, bf16, [[1,1]]], op1=add, imm1=sbuf[p0:128, off=16386, bf16, [[1,1]]]
[scalar] activate2 dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], op0=multiply, imm0=sbuf[p0:128, off=16384, fp32, [[1,1]]], op1=add, imm1=sbuf[p0:128, off=16388, bf16, [[1,1]]]  # expected-error {{operand 'imm1': dtype bfloat16 differs from imm0's float32 (tensor immediates share a dtype)}}
# -----
# activate2 reductions
# chip: trn3
[scalar] activate2 dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], reduce_op=abs_min, reduce_res=sbuf[p0:128, off=16384, fp32, [[1,1]]]
[scalar] activate2 dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], reduce_op=multiply, reduce_res=sbuf[p0:128, off=16384, fp32, [[1,1]]]  # expected-error {{operand 'reduce_op': operator multiply is not allowed here (allowed: add, maximum, minimum, abs_max, abs_min)}}
# -----
# invert is a bitvec operator: integers, vector engine
# chip: trn2
[vector] tensor_scalar dst=sbuf[p0:128, off=8192, uint8, [[1,512]]], data=sbuf[p0:128, off=12288, uint8, [[1,512]]], op0=invert, operand0=0
[vector] tensor_scalar dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], op0=invert, operand0=0  # expected-error {{operand 'dst': dtype float32 is not an integer type, as a bitvec operator requires}}
# expected-error@-1 {{operand 'data': dtype float32 is not an integer type, as a bitvec operator requires}}
# -----
# mod and fmod are arithmetic operators: any dtype, scalar_tensor_tensor takes them
# chip: trn2
[vector] scalar_tensor_tensor dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, bf16, [[1,512]]], op0=mod, operand0=1, op1=subtract, operand1=sbuf[p0:128, off=4096, bf16, [[1,512]]], reverse1=true
[vector] scalar_tensor_tensor dst=sbuf[p0:128, off=8192, int32, [[1,512]]], data=sbuf[p0:128, off=12288, int32, [[1,512]]], op0=invert, operand0=0, op1=subtract, operand1=sbuf[p0:128, off=12288, int32, [[1,512]]]  # expected-error {{operand 'op0': scalar_tensor_tensor takes arithmetic operators only, not invert}}
# -----
# activate2 relu_param is a number or [P, 1]
# chip: trn3
[scalar] activate2 dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], func=prelu, relu_param=sbuf[p0:128, off=16384, fp32, [[1,1]]]
[scalar] activate2 dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], func=prelu, relu_param=0.25
[scalar] activate2 dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data=sbuf[p0:128, off=4096, fp32, [[1,512]]], func=prelu, relu_param=sbuf[p0:128, off=16384, fp32, [[1,2]]]  # expected-error {{operand 'relu_param': a per-partition operand must have shape [128, 1], not [128, 2]}}
