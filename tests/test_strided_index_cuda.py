"""Strided<N> (cuda/common.cuh) turns a flat index into byte offsets; below 2^31 elements it
divides by each dim's size with FastDivisor (minitorch/fast_divisor.h: a multiply-high and a
shift). Broadcast and strided elementwise ops on the emulated device, with dims of awkward
sizes (primes, powers of two and their neighbours, 1), must equal the CPU's answers.
"""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON

pytestmark = pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)


def _fast_div(n: int, d: int) -> int:
    """FastDivisor's arithmetic in Python, to check the formula on the divisors that matter."""
    s = 0
    while (1 << s) < d:
        s += 1
    m = ((1 << 32) * ((1 << s) - d)) // d + 1
    assert m < (1 << 32)
    return (((n * m) >> 32) + n) >> s


@pytest.mark.parametrize("d", [1, 2, 3, 5, 7, 31, 32, 33, 1000, 4095, 4096, 4097, 65537, 2**20 + 7,
                               2**30 - 1, 2**30, 2**30 + 1, 2**31 - 1])
def test_the_divisor_formula_is_exact_below_2_to_the_31(d):
    rng = np.random.default_rng(d)
    ns = [0, 1, d - 1, d, d + 1, 2**31 - 1, 2**31 - 2] + [int(v) for v in rng.integers(0, 2**31, 200)]
    for n in ns:
        assert _fast_div(n, d) == n // d, (n, d)


@pytest.mark.parametrize("shape_a,shape_b", [
    ((7, 13, 5), (13, 1)), ((3, 1, 97), (1, 31, 1)), ((33, 4097), (4097,)), ((2, 3, 5, 7, 11), (5, 1, 11)),
    ((1000, 3), (1000, 1)), ((65537,), (1,)), ((5, 1, 2, 1, 3, 1, 2), (1, 4, 1, 3, 1, 5, 1)),
])
def test_broadcast_ops_match_the_cpu(shape_a, shape_b):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape_a).astype(np.float32)
    b = rng.standard_normal(shape_b).astype(np.float32)
    ca, cb = minitorch.tensor(a), minitorch.tensor(b)
    ga, gb = ca.to("cuda"), cb.to("cuda")
    np.testing.assert_array_equal((ga * gb).cpu().numpy(), (ca * cb).numpy())
    np.testing.assert_array_equal(minitorch.where(ga > gb, ga, gb).cpu().numpy(),
                                  minitorch.where(ca > cb, ca, cb).numpy())


def test_strided_views_and_copies_match_the_cpu():
    x = minitorch.tensor(np.arange(7 * 11 * 13, dtype=np.float64).reshape(7, 11, 13))
    g = x.to("cuda")
    for view in (lambda t: t.permute(2, 0, 1), lambda t: t[::2, 1::3, ::2],
                 lambda t: t.transpose(0, 2)[3:, :, 1:]):
        np.testing.assert_array_equal(view(g).contiguous().cpu().numpy(), view(x).contiguous().numpy())
        np.testing.assert_array_equal((view(g) + 1).cpu().numpy(), (view(x) + 1).numpy())
