# y = 2x + 1 over x [1024, 512] fp32, as 8 tiles of [128, 512] in a loop that runs on the
# device: each queue compiles the body once and counts its trips in its own register r0
# (docs/dynamic-loops.md). Trip i reads and writes the rows 128i.. by register-relative
# addresses (262144 bytes = one tile per unit of r0).
#
.hbm x@0x0:float32[1024,512]
.hbm y@0x200000:float32[1024,512]
#
# Two SBUF buffers: x tile at 0, y tile at 2048. Semaphores count trips: s1 tiles loaded,
# s2 tiles computed, s3 tiles stored. A wait relative to r0 names this trip's count: the
# computation of trip i waits for load i (s1 >= i + 1) and for store i - 1, which read the
# buffer it overwrites (s3 >= i).

[dma.0] reg_set dst=r0, imm=0
[dma.0] dma_copy dst=sbuf[p0:128, off=0, float32, [[1,512]]], src=hbm[p0:128x512, addr=0x0+r0*262144, float32, [[1,512]]] wait s2>=r0 signal s1+=1
[dma.0] reg_add dst=r0, src=r0, imm=1
[dma.0] branch cond=lt, a=r0, imm=8, target=1

[vector] reg_set dst=r0, imm=0
[vector] tensor_scalar dst=sbuf[p0:128, off=2048, float32, [[1,512]]], data=sbuf[p0:128, off=0, float32, [[1,512]]], op0=multiply, operand0=2, op1=add, operand1=1 wait s1>=r0+1, s3>=r0 signal s2+=1
[vector] reg_add dst=r0, src=r0, imm=1
[vector] branch cond=lt, a=r0, imm=8, target=5

[dma.1] reg_set dst=r0, imm=0
[dma.1] dma_copy dst=hbm[p0:128x512, addr=0x200000+r0*262144, float32, [[1,512]]], src=sbuf[p0:128, off=2048, float32, [[1,512]]] wait s2>=r0+1 signal s3+=1
[dma.1] reg_add dst=r0, src=r0, imm=1
[dma.1] branch cond=lt, a=r0, imm=8, target=9
