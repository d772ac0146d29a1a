# Validation rules of every instruction (docs/isa.md, "Every instruction"): the engine may
# run the operation, queues exist, semaphore ids are in range. Each section pairs a valid
# instruction with an invalid variant; the driver is src/isa/tests/diagnostics_test.cpp.
# -----
# engine may run the op
# chip: trn2
[vector] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]]
[tensor] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]]  # expected-error {{the tensor engine cannot execute tensor_copy (allowed: vector, scalar, gpsimd)}}
# -----
# compute engine has one queue
# chip: trn2
[vector] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]]
[vector.1] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]]  # expected-error {{the vector engine has a single queue (index 0), not 1}}
# -----
# semaphore ids in range
# chip: trn2
[vector] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]] wait s255>=1 signal s0+=1
[vector] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]] wait s256>=1  # expected-error {{wait on semaphore 256 (semaphores are 0..255)}}
# -----
# signal semaphore in range
# chip: trn2
[vector] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]] signal s7+=1
[vector] tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=4096, fp32, [[1,512]]] signal s1000+=1  # expected-error {{signal of semaphore 1000 (semaphores are 0..255)}}
