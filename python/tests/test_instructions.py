"""nki.isa calls return an NkiInstruction; depends_on orders instructions no data orders,
with NKI's rules (producers first, not out of a dynamic loop) as errors at the kernel line.
Registers have no value on the host: Python control flow over one is a TypeError."""

import re

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import trnsim
from helpers import expect_error_at, line_of, uniform

F32 = np.float32


def vector_order(with_edge):
    """The names of the vector queue's "late" and "early" memsets in issue order: "late"
    is recorded first but writes a tile that waits for a DMA and a GpSimd copy; "early"
    waits for nothing, so the list scheduler issues it first unless told otherwise."""

    def kernel(x):
        a = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        b = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=a, src=nl.load(x), engine=nisa.gpsimd_engine)
        late = nisa.memset(dst=a, value=1.0, name="late")
        early = nisa.memset(dst=b, value=2.0, name="early")
        assert isinstance(late, nisa.NkiInstruction)
        if with_edge:
            assert early.depends_on(late) is early
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.tensor_tensor(dst=a, data1=a, data2=b, op=nl.add)
        nl.store(out, value=a)
        return out

    got = nki.simulate(kernel)(uniform((128, 512), seed=70))
    np.testing.assert_array_equal(got, np.full((128, 512), 3.0, F32))
    asm = trnsim.last_run().assembly()
    return re.findall(r'name="(late|early)"', asm)


def test_depends_on_orders_instructions_no_data_orders():
    assert vector_order(with_edge=False) == ["early", "late"]
    assert vector_order(with_edge=True) == ["late", "early"]


def test_depends_on_rules_are_errors_at_the_kernel_line():
    def backwards(x):
        t = nl.load(x)
        first = nisa.memset(dst=t, value=0.0)
        second = nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=1.0)
        first.depends_on(second)  # bad
        return None

    expect_error_at(backwards, line_of(backwards, "# bad"), r"recorded after the instruction",
                    np.zeros((4, 4), F32))

    def out_of_a_loop(x):
        t = nl.load(x)
        inside = []

        def body(i):
            inside.append(nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=1.0))

        nl.fori_loop(0, 2, body)
        nisa.memset(dst=t, value=0.0).depends_on(inside[0])  # bad
        return None

    expect_error_at(out_of_a_loop, line_of(out_of_a_loop, "# bad"),
                    r"producer is inside a dynamic loop", np.zeros((4, 4), F32))

    def not_an_instruction(x):
        nisa.memset(dst=nl.load(x), value=0.0).depends_on(x)

    with pytest.raises(TypeError, match="depends_on takes the NkiInstruction values"):
        nki.simulate(not_an_instruction)(np.zeros((4, 4), F32))


def test_a_loop_body_may_depend_on_an_instruction_before_the_loop_and_in_its_trip():
    def kernel(x):
        t = nl.load(x)
        before = nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
        scratch = nl.ndarray((4, 4), dtype=nl.float32, buffer=nl.sbuf)
        other = nl.ndarray((4, 4), dtype=nl.float32, buffer=nl.sbuf)

        def body(i):
            first = nisa.memset(dst=other, value=0.0)
            nisa.memset(dst=scratch, value=1.0).depends_on(before, first)
            nisa.tensor_tensor(dst=t, data1=t, data2=scratch, op=nl.add)

        nl.fori_loop(0, 3, body)
        out = nl.ndarray((4, 4), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=t)
        return out

    x = uniform((4, 4), seed=71)
    np.testing.assert_array_equal(nki.simulate(kernel)(x), x * F32(2) + F32(3))


def test_a_register_has_no_host_value():
    def kernel(x):
        r = nisa.register_alloc(3)
        assert isinstance(r, nisa.VirtualRegister)
        while r:  # would never end if a register were truthy
            pass

    with pytest.raises(TypeError, match="exists only on the device"):
        nki.simulate(kernel)(np.zeros((1, 1), F32))

    def ranged(x):
        for _ in range(nisa.register_alloc(3)):
            pass

    with pytest.raises(TypeError, match="exists only on the device"):
        nki.simulate(ranged)(np.zeros((1, 1), F32))
