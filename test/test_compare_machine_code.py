"""
``bench/compare_machine_code.py``'s normalization, on numba's own assembly.

The script says a change left a kernel "the same machine code" when the normalized assembly
of both trees is equal: the normalization must drop what names a function (numba's unique
ids, addresses mangled into names) and keep every instruction and constant. Its first version
erased every long hexadecimal number, constant pools included, and so called two kernels
differing in a floating-point constant the same.
"""
import os
import sys

import numba
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "bench"))
import compare_machine_code  # noqa: E402


def _assembly(source, name):
    """Compile ``source``'s function ``name`` afresh (its own dispatcher) and return its asm."""
    scope = {}
    exec(compile(source, f"<{name}>", "exec"), scope)       # a fresh function each time
    dispatcher = numba.njit("float64(float64)", cache=False)(scope[name])
    (asm,) = dispatcher.inspect_asm().values()
    return asm


SOURCE = "def scaled(x):\n    return x * {c} + 0.5\n"


def test_the_same_source_compiled_twice_is_the_same_after_normalizing():
    first = _assembly(SOURCE.format(c="1.2345678"), "scaled")
    second = _assembly(SOURCE.format(c="1.2345678"), "scaled")
    assert first != second, "numba named both alike: the test shows nothing"
    assert compare_machine_code.normalized(first) == compare_machine_code.normalized(second)


@pytest.mark.parametrize("other", ["1.2345679", "2.0"])
def test_a_changed_constant_is_a_difference(other):
    ours = compare_machine_code.normalized(_assembly(SOURCE.format(c="1.2345678"), "scaled"))
    theirs = compare_machine_code.normalized(_assembly(SOURCE.format(c=other), "scaled"))
    assert ours != theirs


def test_immediates_and_pool_entries_are_kept_and_names_lose_their_ids():
    asm = "\n".join([
        "\t.globl\t_ZN8__main__6scaledB4v367B38c8tJTIcFKzyF2ILShI4CrgQElYZ5yRbhYnZZCAA_3d_3dEd",
        "\tmovabsq\t$0x3ff3c0ca2a5b1d5d, %rax",
        "\t.quad\t0x7fffffffffffffff",
        "\tmovabsq\t$_ZN08NumbaEnv8__main__6scaledB4v367B38c8tJTIcFKzyF2ILShI4Crg, %rcx",
        "\t.comm\t_ZN08NumbaEnv8__main__6scaledB4v367B38c8tJTIcFKzyF2ILShI4Crg,8,8",
        "\tmovabsq\t$__gufunc__._ZN13_3cdynamic_3e36__numba_parfor_gufunc_0x7febec17b750B4v1B, %r8",
        "\t# a comment", "; another"])
    assert compare_machine_code.normalized(asm) == [
        "\t.globl\t_ZN8__main__6scaledID38c8tJTIcFKzyF2ILShI4CrgQElYZ5yRbhYnZZCAA_3d_3dEd",
        "\tmovabsq\t$0x3ff3c0ca2a5b1d5d, %rax",
        "\t.quad\t0x7fffffffffffffff",
        "\tmovabsq\t$NumbaEnv, %rcx",
        "\tmovabsq\t$__gufunc__._ZN13_3cdynamic_3e36__numba_parfor_gufunc_IDID, %r8"]
