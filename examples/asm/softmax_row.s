# Softmax of one row of 512 fp32 values: y = exp(x - max x) / sum exp(x - max x).
#
.hbm x@0x0:float32[1,512]
.hbm y@0x1000:float32[1,512]
#
# SBUF partition 0: x at 0, -max at 2048, sum at 2052, 1/sum at 2056, exp(x - max) at 4096,
# y at 6144. Semaphores: s1 x loaded, s2 -max ready, s3 exponentials ready, s4 y ready.

[dma.0] dma_copy dst=sbuf[p0:1, off=0, float32, [[1,512]]], src=hbm[p0:1x512, addr=0x0, float32, [[1,512]]] signal s1+=1

# -max(x): a max reduction with negate, ready to be the activation's bias.
[vector] tensor_reduce dst=sbuf[p0:1, off=2048, float32, [[1,1]]], data=sbuf[p0:1, off=0, float32, [[1,512]]], op=maximum, negate=true wait s1>=1 signal s2+=1

# exp(1.0 * x + (-max)) on the Scalar engine.
[scalar] activation dst=sbuf[p0:1, off=4096, float32, [[1,512]]], data=sbuf[p0:1, off=0, float32, [[1,512]]], func=exp, scale=1, bias=sbuf[p0:1, off=2048, float32, [[1,1]]] wait s2>=1 signal s3+=1

# sum, 1/sum, and the scaling, in order on the Vector engine.
[vector] tensor_reduce dst=sbuf[p0:1, off=2052, float32, [[1,1]]], data=sbuf[p0:1, off=4096, float32, [[1,512]]], op=add wait s3>=1
[vector] reciprocal dst=sbuf[p0:1, off=2056, float32, [[1,1]]], data=sbuf[p0:1, off=2052, float32, [[1,1]]]
[vector] tensor_scalar dst=sbuf[p0:1, off=6144, float32, [[1,512]]], data=sbuf[p0:1, off=4096, float32, [[1,512]]], op0=multiply, operand0=sbuf[p0:1, off=2056, float32, [[1,1]]] signal s4+=1

[dma.1] dma_copy dst=hbm[p0:1x512, addr=0x1000, float32, [[1,512]]], src=sbuf[p0:1, off=6144, float32, [[1,512]]] wait s4>=1
