"""nl.shared_constant (data the kernel carries into HBM) and nl.device_print (values shown
after the run, as they were at that point of the kernel)."""

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import trnsim
from helpers import bf16, expect_error_at, line_of, uniform

F32 = np.float32


def test_shared_constant_from_an_array_and_from_a_npy_file(tmp_path):
    table = uniform((128, 32), seed=60)
    path = tmp_path / "table.npy"
    np.save(path, table * F32(3))

    def kernel(x):
        a = nl.shared_constant(table)
        b = nl.shared_constant(str(path))
        assert a.buffer == nl.shared_hbm and a.dtype == nl.float32
        out = nl.ndarray((128, 32), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=nl.add(nl.add(nl.load(x), nl.load(a)), nl.load(b)))
        return out

    x = uniform((128, 32), seed=61)
    np.testing.assert_array_equal(nki.simulate(kernel)(x), (x + table) + table * F32(3))


def test_shared_constant_of_a_dtype_numpy_lacks_and_of_integers():
    values = uniform((16, 8), seed=62)
    codes = np.arange(16 * 8, dtype=np.int16).reshape(16, 8)

    def kernel(x):
        c = nl.shared_constant(trnsim.typed(values, nl.bfloat16))
        i = nl.shared_constant(codes)
        assert c.dtype == nl.bfloat16 and i.dtype == nl.int16
        out = nl.ndarray((2, 16, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out[0], value=nl.load(c, dtype=nl.float32))
        nl.store(out[1], value=nl.load(i, dtype=nl.float32))
        return out

    got = nki.simulate(kernel)(np.zeros((1, 1), F32))
    np.testing.assert_array_equal(got[0], bf16(values))
    np.testing.assert_array_equal(got[1], codes.astype(F32))


def test_shared_constant_is_shared_by_the_programs_of_a_logical_core():
    table = uniform((128, 16), seed=63)

    @nki.jit
    def kernel(x):
        c = nl.shared_constant(table)
        out = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.shared_hbm)
        rows = 128 // nl.num_programs()
        r0 = rows * nl.program_id(0)
        nl.store(out[r0:r0 + rows], value=nl.multiply(nl.load(x[r0:r0 + rows]),
                                                        nl.load(c[r0:r0 + rows])))
        return out

    x = uniform((128, 16), seed=64)
    np.testing.assert_array_equal(kernel[2](x), x * table)


def test_shared_constant_errors():
    def returns_it(x):
        return nl.shared_constant(np.ones((4, 4), F32))  # bad

    expect_error_at(returns_it, line_of(returns_it, "# bad"), r"returns its shared_constant",
                    np.ones((1, 1), F32))

    def float64(x):
        nl.shared_constant(np.ones((4, 4)))

    with pytest.raises(TypeError, match=r"shared_constant's constant is a NumPy array of float64"):
        nki.simulate(float64)(np.ones((1, 1), F32))


def test_a_shared_constant_is_read_only():
    def writes_it(x):
        c = nl.shared_constant(np.ones((4, 4), F32))
        nl.store(c, value=nl.load(x))  # bad
        out = nl.ndarray((4, 4), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=nl.load(c))
        return out

    expect_error_at(writes_it, line_of(writes_it, "# bad"), r"writes the shared_constant",
                    np.zeros((4, 4), F32))


def test_device_print_shows_the_values_at_that_point(capsys):
    def kernel(x):
        t = nl.load(x)
        nl.device_print("before", t)
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)  # overwrites t
        nl.device_print("after", t)
        nl.device_print("input", x)
        out = nl.ndarray((2, 3), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=t)
        return out

    x = np.arange(6, dtype=F32).reshape(2, 3)
    np.testing.assert_array_equal(nki.simulate(kernel)(x), x * 2)
    printed = capsys.readouterr().out
    assert printed == (f"before {x}\nafter {x * 2}\ninput {x}\n"), printed


def test_device_print_names_the_core_with_several_and_prints_nothing_untimed(capsys):
    @nki.jit
    def kernel(x):
        t = nl.load(x[nl.program_id(0):nl.program_id(0) + 1])
        nl.device_print("row", t)
        out = nl.ndarray((2, 3), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out[nl.program_id(0):nl.program_id(0) + 1], value=t)
        return out

    x = np.arange(6, dtype=F32).reshape(2, 3)
    kernel[2](x)
    assert capsys.readouterr().out == f"row [core 0] {x[0:1]}\nrow [core 1] {x[1:2]}\n"
    trnsim.set_options(timing_only=True)
    try:
        kernel[2](x)
    finally:
        trnsim.reset_options()
    assert capsys.readouterr().out == ""


def test_device_print_errors_at_the_kernel_line():
    def of_psum(x):
        acc = nl.ndarray((4, 4), dtype=nl.float32, buffer=nl.psum)
        nisa.memset(dst=acc, value=0.0)
        nl.device_print("acc", acc)  # bad
        return None

    expect_error_at(of_psum, line_of(of_psum, "# bad"), r"device_print of '.*' in psum",
                    np.ones((1, 1), F32))

    def in_a_loop(x):
        t = nl.load(x)

        def body(i):
            nl.device_print("t", t)  # bad

        nl.fori_loop(0, 2, body)
        return None

    expect_error_at(in_a_loop, line_of(in_a_loop, "# bad"), r"device_print inside a dynamic loop",
                    np.ones((4, 4), F32))
