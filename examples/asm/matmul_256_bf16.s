# A 256x256x256 BF16 matmul on one NeuronCore: C = A @ B, fp32 result.
#
# HBM tensors (trnsim run-asm allocates them; see docs/simulator.md):
#   a_t = A transposed, [K=256, M=256] bf16 (the stationary operand is K-major)
#   b   = [K=256, N=256] bf16
#   c   = [M=256, N=256] float32, written by the program
.hbm a_t@0x0:bfloat16[256,256]
.hbm b@0x20000:bfloat16[256,256]
.hbm c@0x40000:float32[256,256]
#
# SBUF, per partition (partition = k within a 128-row K tile):
#   [0, 1024)     a_t K tiles 0 and 1 (512 bytes = 256 bf16 each)
#   [1024, 2048)  b   K tiles 0 and 1
#   [4096, 6144)  C row tiles 0 and 1 evicted from PSUM (1024 bytes = 256 fp32 each)
# PSUM: C row tile m (128 rows x 256 fp32) at offset m * 2048 (bank m: 2 KiB banks).
#
# Semaphores: s1 counts loaded tiles (4), s2 finished PSUM tiles, s3 evicted tiles.

# Loads: K tile k of a_t and b, rows [128k, 128k+128), on two DMA queues.
[dma.0] dma_copy dst=sbuf[p0:128, off=0, bfloat16, [[1,256]]], src=hbm[p0:128x256, addr=0x0, bfloat16, [[1,256]]] signal s1+=1
[dma.0] dma_copy dst=sbuf[p0:128, off=512, bfloat16, [[1,256]]], src=hbm[p0:128x256, addr=0x10000, bfloat16, [[1,256]]] signal s1+=1
[dma.1] dma_copy dst=sbuf[p0:128, off=1024, bfloat16, [[1,256]]], src=hbm[p0:128x256, addr=0x20000, bfloat16, [[1,256]]] signal s1+=1
[dma.1] dma_copy dst=sbuf[p0:128, off=1536, bfloat16, [[1,256]]], src=hbm[p0:128x256, addr=0x30000, bfloat16, [[1,256]]] signal s1+=1

# C tile m = sum over K tiles of a_t[k tile, m tile]^T @ b[k tile]: the first matmul
# overwrites PSUM, the second accumulates onto it.
[tensor] nc_matmul dst=psum[p0:128, off=0, float32, [[1,256]]], stationary=sbuf[p0:128, off=0, bfloat16, [[1,128]]], moving=sbuf[p0:128, off=1024, bfloat16, [[1,256]]], accumulate=overwrite wait s1>=4
[tensor] nc_matmul dst=psum[p0:128, off=0, float32, [[1,256]]], stationary=sbuf[p0:128, off=512, bfloat16, [[1,128]]], moving=sbuf[p0:128, off=1536, bfloat16, [[1,256]]], accumulate=accumulate signal s2+=1
[tensor] nc_matmul dst=psum[p0:128, off=2048, float32, [[1,256]]], stationary=sbuf[p0:128, off=256, bfloat16, [[1,128]]], moving=sbuf[p0:128, off=1024, bfloat16, [[1,256]]], accumulate=overwrite
[tensor] nc_matmul dst=psum[p0:128, off=2048, float32, [[1,256]]], stationary=sbuf[p0:128, off=768, bfloat16, [[1,128]]], moving=sbuf[p0:128, off=1536, bfloat16, [[1,256]]], accumulate=accumulate signal s2+=1

# Evict each finished PSUM tile to SBUF (PSUM cannot be DMA'd), then store it.
[vector] tensor_copy dst=sbuf[p0:128, off=4096, float32, [[1,256]]], src=psum[p0:128, off=0, float32, [[1,256]]] wait s2>=1 signal s3+=1
[vector] tensor_copy dst=sbuf[p0:128, off=5120, float32, [[1,256]]], src=psum[p0:128, off=2048, float32, [[1,256]]] wait s2>=2 signal s3+=1
[dma.2] dma_copy dst=hbm[p0:128x256, addr=0x40000, float32, [[1,256]]], src=sbuf[p0:128, off=4096, float32, [[1,256]]] wait s3>=1
[dma.2] dma_copy dst=hbm[p0:128x256, addr=0x60000, float32, [[1,256]]], src=sbuf[p0:128, off=5120, float32, [[1,256]]] wait s3>=2
