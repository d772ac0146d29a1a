# Validation rules of the DMA operations, sendrecv, collective and core_barrier (docs/isa.md, "Per operation").
# -----
# dma queue exists
# chip: trn2
[dma.15] dma_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=hbm[p0:128x512, addr=0, fp32, [[1,512]]]
[dma.16] dma_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=hbm[p0:128x512, addr=0, fp32, [[1,512]]]  # expected-error {{DMA queue 16 does not exist (16 queues on NeuronCore-v3)}}
# -----
# dma cannot reach psum
# chip: trn2
[dma.0] dma_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=hbm[p0:128x512, addr=0, fp32, [[1,512]]]
[dma.0] dma_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=psum[p0:128, off=0, fp32, [[1,512]]]  # expected-error {{operand 'src': DMA cannot access psum (dma_copy moves between hbm and sbuf)}}
# -----
# dma element counts
# chip: trn2
[dma.0] dma_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=hbm[p0:128x512, addr=0, fp32, [[1,512]]]
[dma.0] dma_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=hbm[p0:128x256, addr=0, fp32, [[1,256]]]  # expected-error {{operand 'src': 32768 elements; dst has 65536 (counts must match)}}
# -----
# dma priority gen4
# chip: trn3
[dma.0] dma_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=hbm[p0:128x512, addr=0, fp32, [[1,512]]], priority=3
# -----
# dma priority gen4: not on trn2
# chip: trn2
[dma.0] dma_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=hbm[p0:128x512, addr=0, fp32, [[1,512]]], priority=2  # expected-error {{operand 'priority': DMA priorities are not available on NeuronCore-v3}}
# -----
# dma priority range
# chip: trn3
[dma.0] dma_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=hbm[p0:128x512, addr=0, fp32, [[1,512]]], priority=3
[dma.0] dma_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=hbm[p0:128x512, addr=0, fp32, [[1,512]]], priority=4  # expected-error {{operand 'priority': priority 4 exceeds the highest class 3}}
# -----
# dma accumulate gen4
# chip: trn3
[dma.0] dma_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=hbm[p0:128x512, addr=0, fp32, [[1,512]]], accumulate=add
# -----
# dma accumulate gen4: not on trn2
# chip: trn2
[dma.0] dma_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=hbm[p0:128x512, addr=0, fp32, [[1,512]]], accumulate=add  # expected-error {{operand 'accumulate': near-memory accumulate is not available on NeuronCore-v3}}
# -----
# dma transpose dtype
# chip: trn2
[dma.0] dma_transpose dst=sbuf[p0:64, off=0, bf16, [[1,128]]], src=hbm[p0:128x64, addr=0, bf16, [[1,64]]]
[dma.0] dma_transpose dst=sbuf[p0:64, off=0, int8, [[1,128]]], src=hbm[p0:128x64, addr=0, int8, [[1,64]]]  # expected-error {{operand 'src': dtype int8 is not a 2- or 4-byte type}}
[dma.0] dma_transpose dst=sbuf[p0:64, off=0, fp16, [[1,128]]], src=hbm[p0:128x64, addr=0, bf16, [[1,64]]]  # expected-error {{operand 'dst': dtype float16 differs from the src's bfloat16 (dma_transpose does not cast)}}
# -----
# dma indirect index count
# chip: trn2
[dma.0] dma_indirect dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=hbm[p0:4096x512, addr=0, fp32, [[1,512]]], index=sbuf[p0:128, off=8192, uint32, [[1,1]]]
[dma.0] dma_indirect dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=hbm[p0:4096x512, addr=0, fp32, [[1,512]]], index=sbuf[p0:128, off=8192, uint32, [[1,2]]]  # expected-error {{operand 'index': 256 indices for 128 rows of 'dst' (one index per row)}}
# -----
# dma indirect read-modify-write (dma_compute with a vector offset): indexed rows in HBM, the other side in SBUF
# chip: trn2
[dma.0] dma_indirect dst=hbm[p0:4096x512, addr=0, bf16, [[1,512]]], src=sbuf[p0:128, off=0, fp32, [[1,512]]], index=sbuf[p0:128, off=8192, uint32, [[1,1]]], mode=scatter, accumulate=add, oob=skip
[dma.0] dma_indirect dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=hbm[p0:4096x512, addr=0, fp32, [[1,512]]], index=sbuf[p0:128, off=8192, uint32, [[1,1]]], accumulate=add
[dma.0] dma_indirect dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]], index=sbuf[p0:128, off=8192, uint32, [[1,1]]], mode=scatter, accumulate=add  # expected-error {{operand 'dst': must be in hbm, not sbuf}}
# -----
# core barrier cores
# chip: trn2
[sync] core_barrier num_cores=2
[sync] core_barrier num_cores=4  # expected-error {{operand 'num_cores': 4 cores; a barrier spans 2 to 2 cores (largest logical core of trn2)}}
# -----
# sendrecv: SBUF on both sides, one dtype and shape, peers within the largest logical core
# chip: trn2
[dma.0] sendrecv dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]], send_to=1, recv_from=1, pipe=3
[dma.0] sendrecv dst=sbuf[p0:128, off=0, bf16, [[1,256]]], src=hbm[p0:128x512, addr=0, fp32, [[1,512]]], send_to=2, recv_from=0  # expected-error {{operand 'src': must be in sbuf, not hbm}}
# expected-error@-1 {{operand 'dst': dst and src dtypes must match (the data moves raw between the cores)}}
# expected-error@-2 {{operand 'src': [128, 512]; dst is [128, 256] (the shapes must match)}}
# expected-error@-3 {{operand 'send_to': core 2 of a logical core; trn2's largest has 2 (0 to 1)}}
# -----
# collective: one memory and dtype, add/max/min reductions, whole and disjoint groups, pairs only for a permute
# chip: trn3
[dma.0] collective dst=hbm[p0:128x512, addr=0x100000, fp32, [[1,512]]], src=hbm[p0:128x512, addr=0, fp32, [[1,512]]], kind=all_reduce, op=maximum, groups=[0,1,2,3], group_size=2
[dma.0] collective dst=sbuf[p0:128, off=0, bf16, [[1,512]]], src=hbm[p0:128x512, addr=0, fp32, [[1,512]]], kind=all_to_all, op=multiply, groups=[0,1,1], group_size=2, pairs=[0,1]  # expected-error {{operand 'dst': src and dst must both be in HBM or both in SBUF (NKI mixes no memories)}}
# expected-error@-1 {{operand 'dst': bfloat16; src is float32 (a collective moves data of one dtype)}}
# expected-error@-2 {{operand 'pairs': only a permute takes pairs, not all_to_all}}
# expected-error@-3 {{operand 'groups': 3 ranks do not make groups of 2}}
# expected-error@-4 {{operand 'groups': a rank is listed twice (replica groups do not overlap)}}
[dma.0] collective dst=hbm[p0:128x512, addr=0x100000, fp32, [[1,512]]], src=hbm[p0:128x512, addr=0, fp32, [[1,512]]], kind=reduce_scatter, op=multiply  # expected-error {{operand 'op': multiply (a collective reduces with add, maximum or minimum)}}
[dma.0] collective dst=hbm[p0:128x512, addr=0x100000, fp32, [[1,512]]], src=hbm[p0:128x512, addr=0, fp32, [[1,512]]], kind=permute, groups=[0,1], group_size=2, pairs=[0]  # expected-error {{operand 'pairs': a permute lists source, target pairs (an even count; none: a ring in each replica group)}}
# expected-error@-1 {{operand 'groups': a permute takes pairs or replica groups (a ring in each), not both}}
[dma.0] collective dst=hbm[p0:128x512, addr=0x100000, fp32, [[1,512]]], src=hbm[p0:128x512, addr=0, fp32, [[1,512]]], kind=permute, pairs=[0,1,0,2]  # expected-error {{operand 'pairs': a rank sends or receives twice (each at most once in a permute)}}
# permute_reduce sends op(src, src1); the -v kinds read uint32 metadata of 3 (4 with has_rdispls) rows
[dma.0] collective dst=hbm[p0:1x512, addr=0x100000, fp32, [[1,512]]], src=hbm[p0:1x512, addr=0, fp32, [[1,512]]], kind=permute_reduce, op=maximum, groups=[0,1], group_size=2, src1=hbm[p0:1x512, addr=0x200000, fp32, [[1,512]]]
[dma.0] collective dst=hbm[p0:1x512, addr=0x100000, fp32, [[1,512]]], src=hbm[p0:1x512, addr=0, fp32, [[1,512]]], kind=all_to_all_v, groups=[0,1,2,3], group_size=4, metadata=sbuf[p0:1, off=0, uint32, [[1,16]]], has_rdispls=true
[dma.0] collective dst=hbm[p0:1x512, addr=0x100000, fp32, [[1,512]]], src=hbm[p0:1x512, addr=0, fp32, [[1,512]]], kind=permute_reduce, op=multiply  # expected-error {{operand 'src1': a permute_reduce sends op(src, src1): src1 is missing}}
# expected-error@-1 {{operand 'op': multiply (a collective reduces with add, maximum or minimum)}}
[dma.0] collective dst=hbm[p0:1x512, addr=0x100000, fp32, [[1,512]]], src=hbm[p0:1x512, addr=0, fp32, [[1,512]]], kind=all_reduce, src1=hbm[p0:1x256, addr=0x200000, bf16, [[1,256]]], recv_counts_known=true  # expected-error {{operand 'src1': only a permute_reduce takes src1, not all_reduce}}
# expected-error@-1 {{operand 'recv_counts_known': recv_counts_known and has_rdispls belong to the -v collectives, not all_reduce}}
# expected-error@-2 {{operand 'src1': bfloat16 [1, 256]; src is float32 [1, 512] (the two operands of the reduction match)}}
[dma.0] collective dst=hbm[p0:1x512, addr=0x100000, fp32, [[1,512]]], src=hbm[p0:1x512, addr=0, fp32, [[1,512]]], kind=all_gather_v, groups=[0,1,2,3], group_size=4, metadata=sbuf[p0:2, off=0, int32, [[1,5]]]  # expected-error {{operand 'metadata': int32 (counts and displacements are uint32)}}
# expected-error@-1 {{operand 'metadata': 2 partitions (in SBUF the metadata lives on one partition)}}
# expected-error@-2 {{operand 'metadata': 10 elements; it holds 3 rows of one column per member (3 x 4)}}
[dma.0] collective dst=hbm[p0:1x512, addr=0x100000, fp32, [[1,512]]], src=hbm[p0:1x512, addr=0, fp32, [[1,512]]], kind=all_to_all_v  # expected-error {{operand 'metadata': all_to_all_v reads its counts from a metadata tensor: it is missing}}
# -----
# sendrecv: not on NeuronCore-v2
# chip: trn1
[dma.0] sendrecv dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]]  # expected-error {{sendrecv needs NeuronCore-v3 or newer (this chip is NeuronCore-v2)}}
# -----
# dma_compute: 1 to 16 sources of dst's element count, add only
# chip: trn2
[dma.0] dma_compute dst=sbuf[p0:128, off=0, fp32, [[1,512]]], srcs=[sbuf[p0:128, off=4096, bf16, [[1,512]]], hbm[p0:128x512, addr=0x100000, fp32, [[1,512]]]]
[dma.0] dma_compute dst=sbuf[p0:128, off=0, fp32, [[1,512]]], srcs=[sbuf[p0:128, off=4096, bf16, [[1,256]]]], reduce_op=multiply  # expected-error {{operand 'reduce_op': operator multiply is not allowed here (allowed: add)}}
# expected-error@-1 {{operand 'srcs[0]': 32768 elements; dst has 65536 (counts must match)}}
# -----
# dma indirect transpose (dma_transpose of a vector-offset view): a plain gather into SBUF, uint32 indices on 16..128 partitions (128 with more than one column), the transpose's shape
# chip: trn2
[dma.0] dma_indirect dst=sbuf[p0:64, off=0, bf16, [[1,256]]], src=hbm[p0:300x64, addr=0, bf16, [[1,64]]], index=sbuf[p0:128, off=8192, uint32, [[1,2]]], transpose=true
[dma.0] dma_indirect dst=sbuf[p0:64, off=0, bf16, [[1,96]]], src=hbm[p0:300x64, addr=0, bf16, [[1,64]]], index=sbuf[p0:48, off=8192, uint32, [[1,2]]], transpose=true  # expected-error {{operand 'index': 48 partitions of indices with 2 per partition; a gathering transpose takes 16 to 128 in multiples of 16, exactly 128 with more than one per partition}}
[dma.0] dma_indirect dst=sbuf[p0:64, off=0, bf16, [[1,128]]], src=hbm[p0:300x64, addr=0, fp32, [[1,64]]], index=sbuf[p0:128, off=8192, int32, [[1,1]]], transpose=true  # expected-error {{operand 'index': dtype int32 is not allowed here (allowed: uint32)}}
# expected-error@-1 {{operand 'dst': dtype bfloat16 differs from the src's float32 (dma_transpose does not cast)}}
# expected-error@-2 {{operand 'src': dtype float32 is not a 2-byte type (a gathering transpose moves 2-byte elements)}}
[dma.0] dma_indirect dst=sbuf[p0:128, off=0, bf16, [[1,256]]], src=sbuf[p0:128, off=2048, bf16, [[1,200]]], index=sbuf[p0:128, off=8192, uint32, [[1,2]]], transpose=true  # expected-error {{operand 'src': must be in hbm, not sbuf}}
# expected-error@-1 {{operand 'src': rows of 200 elements; a gathering transpose takes at most 128}}
# expected-error@-2 {{operand 'dst': shape [128, 256] is not the transpose of 256 gathered rows of 200 elements}}
[dma.0] dma_indirect dst=sbuf[p0:64, off=0, bf16, [[1,128]]], src=hbm[p0:300x64, addr=0, bf16, [[1,64]]], index=sbuf[p0:128, off=8192, uint32, [[1,1]]], mode=scatter, transpose=true  # expected-error {{operand 'transpose': a transposing dma_indirect is a plain gather (mode=gather, no accumulate)}}
# -----
# dma indirect transpose: NeuronCore-v3 or newer
# chip: trn1
[dma.0] dma_indirect dst=sbuf[p0:64, off=0, bf16, [[1,128]]], src=hbm[p0:300x64, addr=0, bf16, [[1,64]]], index=sbuf[p0:128, off=8192, uint32, [[1,1]]], transpose=true  # expected-error {{dma_transpose needs NeuronCore-v3 or newer (this chip is NeuronCore-v2)}}
