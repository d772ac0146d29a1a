"""A loop whose trip count is known only at run time (NKI 0.6 dynamic loops): a padded batch
of row tiles, of which the first `valid` hold data. The kernel reads `valid` from a tensor
into a register and adds the bias to that many tiles, in one loop the device runs. The body
is traced once, so the program does not grow with the batch (docs/dynamic-loops.md).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/dynamic_rows.py
"""

import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl
import trnsim

COLS = 512


@nki.jit
def add_bias_to_valid_tiles(x, bias, valid):
    tiles = x.shape[0] // 128
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm, name="out")
    # The padding stays zero.
    zeros = nl.zeros((128, COLS), dtype=x.dtype, buffer=nl.sbuf)
    for t in range(tiles):
        nisa.dma_copy(dst=out[t * 128:(t + 1) * 128, :], src=zeros)
    # The trip count: a register loaded from the `valid` tensor.
    count = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=count, src=valid)
    n = nisa.register_alloc()
    nisa.register_load(n, count)
    b = nl.ndarray((128, COLS), dtype=x.dtype, buffer=nl.sbuf, name="bias")
    nisa.dma_copy(dst=b, src=bias.ap([[0, 128], [1, COLS]]))  # broadcast over partitions

    def body(t):
        # As [tiles, 128, COLS] views, one unit of t along dim 0 is one tile.
        pattern = [[COLS, 128], [1, COLS]]
        src = x.reshape((tiles, 128, COLS)).ap(pattern, scalar_offset=t, indirect_dim=0)
        dst = out.reshape((tiles, 128, COLS)).ap(pattern, scalar_offset=t, indirect_dim=0)
        tile = nl.ndarray((128, COLS), dtype=x.dtype, buffer=nl.sbuf, name="tile")
        nisa.dma_copy(dst=tile, src=src)
        result = nl.ndarray((128, COLS), dtype=x.dtype, buffer=nl.sbuf, name="result")
        nisa.tensor_tensor(dst=result, data1=tile, data2=b, op=nl.add)
        nisa.dma_copy(dst=dst, src=result)

    nl.fori_loop(0, n, body)
    return out


def main():
    rng = np.random.default_rng(0)
    tiles, valid = 8, 5
    x = rng.uniform(-1, 1, (tiles * 128, COLS)).astype(np.float32)
    bias = rng.uniform(-1, 1, (1, COLS)).astype(np.float32)
    got = add_bias_to_valid_tiles(x, bias, np.array([[valid]], dtype=np.int32))
    want = np.zeros_like(x)
    want[:valid * 128] = x[:valid * 128] + bias
    host = trnsim.last_host_times()
    report = trnsim.last_report()
    print(f"bias on {valid} of {tiles} tiles of [128, {COLS}] on {trnsim.chip()}: "
          f"{host['instructions']} instructions, simulated {report['total_ns'] / 1000:.2f} us, "
          f"{'bit-exact' if np.array_equal(got, want) else 'WRONG'}")
    return 0 if np.array_equal(got, want) else 1


if __name__ == "__main__":
    raise SystemExit(main())
