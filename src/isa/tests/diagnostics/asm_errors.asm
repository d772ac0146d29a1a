# Parse errors (docs/isa.md, "1. Assembly"): the position (line, column) of the offending
# token and what was expected. A parse stops at its first error: one per section.
# -----
# expected-error@+1 col 1 {{unknown mnemonic 'nc_matmu' (did you mean 'nc_matmul'?)}}
nc_matmu dst=sbuf[p0:128, off=0, fp32, [[1,512]]]
# -----
# expected-error@+2 col 44 {{unknown dtype 'bfloat17' (did you mean 'bfloat16'?)}}
# header
[vector] tensor_copy dst=sbuf[p0:1, off=0, bfloat17, [[1,1]]], src=sbuf[p0:128, off=0, fp32, [[1,512]]]
# -----
# expected-error@+1 col 35 {{unknown dtype 'bf17' (did you mean 'bf16'?)}}
tensor_copy dst=sbuf[p0:1, off=0, bf17, [[1,1]]], src=sbuf[p0:128, off=0, fp32, [[1,512]]]
# -----
# expected-error@+1 col 48 {{expected ',' or ']' after dimension}}
tensor_copy dst=sbuf[p0:1, off=0, fp32, [[1,1] [2,2]]], src=sbuf[p0:128, off=0, fp32, [[1,512]]]
# -----
# expected-error@+1 col 103 {{integer 300 out of range for field 'priority' (0..255)}}
dma_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=0, fp32, [[1,512]]], priority=300
# -----
# expected-error@+1 col 32 {{integer overflow}}
tensor_copy dst=sbuf[p0:1, off=99999999999999999999, fp32, [[1,1]]], src=sbuf[p0:128, off=0, fp32, [[1,512]]]
# -----
# expected-error@+3 col 3 {{missing operand 'src' of tensor_copy}}


  tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]]
# -----
# expected-error@+1 col 13 {{unknown field 'dts' for tensor_copy (did you mean 'dst'?)}}
tensor_copy dts=sbuf[p0:128, off=0, fp32, [[1,512]]]
# -----
# expected-error@+1 col 55 {{duplicate field 'dst'}}
tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], dst=sbuf[p0:128, off=0, fp32, [[1,512]]]
# -----
# expected-error@+1 col 2 {{unknown engine 'vectr' (did you mean 'vector'?)}}
[vectr] tensor_copy
# -----
# expected-error@+1 col 23 {{partition range end 32 is before its start 64}}
tensor_copy dst=sbuf[p64:32, off=0, fp32, [[1,1]]]
# -----
# expected-error@+1 col 28 {{expected 'off=' (byte offset within each partition)}}
tensor_copy dst=sbuf[p0:1, addr=0, fp32, [[1,1]]]
# -----
# expected-error@+1 col 66 {{at most 4 free dimensions}}
tensor_copy dst=sbuf[p0:1, off=0, fp32, [[1,1],[1,1],[1,1],[1,1],[1,1]]]
# -----
# expected-error@+1 col 56 {{invalid number '1.5.2'}}
memset dst=sbuf[p0:128, off=0, fp32, [[1,512]]], value=1.5.2
# -----
# expected-error@+1 col 56 {{out of the float range}}
memset dst=sbuf[p0:128, off=0, fp32, [[1,512]]], value=1e39
# -----
# expected-error@+1 col 101 {{unterminated string}}
tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=0, fp32, [[1,512]]] name="abc
# -----
# expected-error@+1 col 148 {{unknown ALU operator 'ad' for field 'op' (did you mean 'add'?)}}
tensor_tensor dst=sbuf[p0:128, off=0, fp32, [[1,512]]], data1=sbuf[p0:128, off=0, fp32, [[1,512]]], data2=sbuf[p0:128, off=0, fp32, [[1,512]]], op=ad
# -----
# expected-error@+1 col 12 {{expected '>=' after the semaphore id}}
sem wait s1>1
# -----
# expected-error@+1 col 11 {{out of range for a semaphore id}}
sem wait s70000>=1
# -----
# expected-error@+1 col 17 {{expected ':' after the origin line}}
sem @kernel.py:3
# -----
# expected-error@+1 col 15 {{expected the end of the line after the origin}}
sem @k.py:1:2 name="x"
# -----
# expected-error@+2 col 1 {{duplicate .seed directive}}
.seed 1
.seed 2
# -----
# expected-error@+1 col 1 {{unknown directive '.sed'}}
.sed 1
# -----
# expected-error@+1 col 14 {{unknown rounding mode 'nearest'}}
sem rounding=nearest
# -----
# expected-error@+1 col 16 {{duplicate 'wait' clause}}
sem wait s1>=1 wait s2>=2
# -----
# expected-error@+1 col 108 {{takes exactly 32 entries, got 3}}
nc_stream_shuffle dst=sbuf[p0:128, off=0, fp32, [[1,512]]], src=sbuf[p0:128, off=0, fp32, [[1,512]]], mask=[1,2,3]
# -----
# expected-error@+1 col 54 {{unexpected 'src': expected ',' before a field}}
tensor_copy dst=sbuf[p0:128, off=0, fp32, [[1,512]]] src=sbuf[p0:128, off=0, fp32, [[1,512]]]
# -----
# expected-error@+1 col 16 {{unknown escape in string}}
custom_op op="a\qb"
# -----
# expected-error@+1 col 21 {{expected '[' right after 'sbuf'}}
tensor_copy dst=sbuf [p0:1, off=0, fp32, [[1,1]]]
