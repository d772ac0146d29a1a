# Validation rules of the control operations: registers and branches (docs/isa.md, "Per
# operation").
# -----
# a loop: every form parses and validates
# chip: trn3
[sync] reg_set dst=r0, imm=0
[sync] reg_load dst=r1, src=hbm[p0:1x1, addr=0x40, int32, [[1,1]]]
[sync] branch cond=ge, a=r0, b=r1, target=6
[dma.0] dma_copy dst=sbuf[p0:1, off=0, fp32, [[1,4]]], src=hbm[p0:1x4, addr=0x0+r0*16, fp32, [[1,4]]] wait s1>=r2-1
[sync] reg_add dst=r0, src=r0, imm=1
[sync] branch target=2
[sync] reg_store dst=sbuf[p0:1, off=64, uint32, [[1,1]]], src=r0
# -----
# registers r0..r63
# chip: trn3
[sync] reg_set dst=r64, imm=1  # expected-error {{operand 'dst': register r64 does not exist (r0..r63)}}
[sync] reg_add dst=r1, imm=1  # expected-error {{operand 'src': a register r0..r63 is required}}
[sync] rank_id dst=r2
[sync] rank_id dst=r64  # expected-error {{operand 'dst': register r64 does not exist (r0..r63)}}
[sync] ring_rank_id dst=r1, step_reg=r2, step=1, groups=[0,1,2,3], group_size=2
[sync] ring_rank_id dst=r1, groups=[0,1,2], group_size=2  # expected-error {{operand 'groups': 3 ranks in groups of 2 (whole groups, or none)}}
# -----
# register loads and stores move one integer element
# chip: trn3
[sync] reg_load dst=r1, src=hbm[p0:1x2, addr=0, int32, [[1,2]]]  # expected-error {{operand 'src': a register moves one element, not [1, 2]}}
[sync] reg_store dst=sbuf[p0:1, off=0, fp32, [[1,1]]], src=r1  # expected-error {{operand 'dst': dtype float32 is not an integer type}}
# -----
# a branch lands on its own queue, inside the program
# chip: trn3
[vector] reg_set dst=r0, imm=0
[sync] branch target=0  # expected-error {{operand 'target': instruction 0 is on another queue}}
[sync] branch cond=ne, a=r0, target=9  # expected-error {{operand 'target': instruction 9 does not exist (the program has 3)}}
# -----
# an unconditional branch compares nothing
# chip: trn3
[sync] branch a=r1, target=0  # expected-error {{operand 'cond': an unconditional branch compares no registers}}
# -----
# register-relative operands and waits name real registers
# chip: trn3
[dma.0] dma_copy dst=sbuf[p0:1, off=0, fp32, [[1,4]]], src=hbm[p0:1x4, addr=0x0+r99*16, fp32, [[1,4]]]  # expected-error {{operand 'src': register r99 does not exist}}
