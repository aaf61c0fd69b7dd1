"""``nn.utils.clip_grad_norm_``'s foreach path (``_C._clip_grad_norm_foreach``): every
gradient measured and scaled together. Against the per-gradient reference path
(``foreach=False``) and NumPy on every device and floating dtype, NaN and inf, zero and
empty gradients, the fallbacks, errors, and the launch count when the gradients fill more
than one multi-tensor table."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitorch
from minitorch import _C, nn
from minitorch.nn.utils import clip_grad_norm_

from conftest import CUDA_SKIP_REASON

SHAPES = [(3, 4), (0,), (5,), (70,), (), (2, 1, 3)]
FLOAT_DTYPES = [minitorch.float32, minitorch.float64, minitorch.float16, minitorch.bfloat16]


def grads_of(arrays, dtype, device):
    ps = []
    for a in arrays:
        p = nn.Parameter(minitorch.zeros(*a.shape, dtype=dtype, device=device))
        p.grad = minitorch.tensor(a, device=device).to(dtype)
        ps.append(p)
    return ps


def arrays(seed, scale=1.0):
    rng = np.random.default_rng(seed)
    return [scale * rng.standard_normal(s) for s in SHAPES]


def to_np(t) -> np.ndarray:
    return np.array(t.detach().to(minitorch.float64).cpu().numpy())


TOL = {minitorch.float32: 1e-6, minitorch.float64: 1e-13, minitorch.float16: 2e-3, minitorch.bfloat16: 1.6e-2}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("norm_type", [2.0, math.inf])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_foreach_matches_the_per_gradient_path_and_numpy(device, dtype, norm_type, max_norm):
    arrs = arrays(1, scale=3.0)
    fused, reference = grads_of(arrs, dtype, device), grads_of(arrs, dtype, device)
    total = clip_grad_norm_(fused, max_norm, norm_type=norm_type)
    total_ref = clip_grad_norm_(reference, max_norm, norm_type=norm_type, foreach=False)
    assert total.shape == () and total.dtype == dtype and total.device.type == device
    # NumPy on the values the gradients really hold (rounded to dtype).
    held = np.concatenate([to_np(p.grad).ravel() for p in grads_of(arrs, dtype, device)])
    want = np.abs(held).max() if norm_type == math.inf else np.sqrt((held ** 2).sum())
    tol = TOL[dtype]
    np.testing.assert_allclose(to_np(total), want, rtol=tol)
    np.testing.assert_allclose(to_np(total), to_np(total_ref), rtol=tol)
    scale = min(1.0, max_norm / (want + 1e-6))
    for p, q, a in zip(fused, reference, arrs):
        assert p.grad.dtype == dtype and p.grad.shape == a.shape
        np.testing.assert_allclose(to_np(p.grad), to_np(q.grad), rtol=tol, atol=tol)
        np.testing.assert_allclose(to_np(p.grad), to_np(minitorch.tensor(a).to(dtype)) * scale, rtol=2 * tol,
                                   atol=2 * tol)
    if max_norm == 1e6:  # the scale is 1: the gradients keep their bits
        for p, a in zip(fused, arrs):
            assert minitorch.equal(p.grad.cpu(), minitorch.tensor(a).to(dtype))


@pytest.mark.parametrize("norm_type", [2.0, math.inf])
def test_nan_and_inf_as_in_pytorch(device, norm_type):
    """A NaN anywhere makes the total and every gradient NaN; an inf (2-norm or inf-norm)
    makes the total inf and the scale 0, so finite gradients become 0 and the inf NaN."""
    nan = grads_of([np.array([1.0, np.nan]), np.array([2.0, 3.0])], minitorch.float32, device)
    assert math.isnan(clip_grad_norm_(nan, 1.0, norm_type=norm_type).item())
    assert all(np.isnan(to_np(p.grad)).all() for p in nan)
    inf = grads_of([np.array([1.0, np.inf]), np.array([2.0, -3.0])], minitorch.float32, device)
    assert math.isinf(clip_grad_norm_(inf, 1.0, norm_type=norm_type).item())
    np.testing.assert_array_equal(to_np(inf[1].grad), [0.0, 0.0])
    assert to_np(inf[0].grad)[0] == 0.0 and np.isnan(to_np(inf[0].grad)[1])
    with pytest.raises(RuntimeError, match="non-finite"):  # the check takes the reference path
        clip_grad_norm_(grads_of([np.array([np.inf])], minitorch.float32, device), 1.0, error_if_nonfinite=True)


def test_zero_and_empty_gradients(device):
    zeros = grads_of([np.zeros((3,)), np.zeros((0, 2))], minitorch.float32, device)
    assert clip_grad_norm_(zeros, 1.0).item() == 0.0
    np.testing.assert_array_equal(to_np(zeros[0].grad), [0.0, 0.0, 0.0])
    only_empty = grads_of([np.zeros((0,))], minitorch.float64, device)
    total = clip_grad_norm_(only_empty, 1.0)
    assert total.item() == 0.0 and total.dtype == minitorch.float64


def test_fallbacks_give_the_same_values(device):
    """Gradients the fused path does not take (strided, two dtypes) take the reference path."""
    arrs = arrays(2)
    strided = grads_of(arrs, minitorch.float64, device)
    strided[0].grad = minitorch.tensor(arrs[0].T.copy(), device=device).t()  # same values, transposed strides
    assert not strided[0].grad.is_contiguous()
    plain = grads_of(arrs, minitorch.float64, device)
    np.testing.assert_allclose(clip_grad_norm_(strided, 0.3).item(), clip_grad_norm_(plain, 0.3).item(), rtol=1e-13)
    for p, q in zip(strided, plain):
        np.testing.assert_allclose(to_np(p.grad), to_np(q.grad), rtol=1e-13)
    mixed = grads_of(arrs[:2], minitorch.float64, device) + grads_of(arrs[2:], minitorch.float32, device)
    want = np.sqrt(sum((to_np(p.grad) ** 2).sum() for p in mixed))
    np.testing.assert_allclose(clip_grad_norm_(mixed, 0.3).item(), want, rtol=1e-6)


def test_the_kernel_entry_refuses_bad_lists(device):
    g = minitorch.ones(3, device=device)
    with pytest.raises(RuntimeError, match="clip_grad_norm_: expected at least one gradient"):
        _C._clip_grad_norm_foreach([], 1.0)
    with pytest.raises(RuntimeError, match="norm_type 2 or inf, got 1"):
        _C._clip_grad_norm_foreach([g], 1.0, 1.0)
    with pytest.raises(TypeError, match="clip_grad_norm_: expected floating-point gradients, got int64"):
        _C._clip_grad_norm_foreach([minitorch.ones(3, dtype=minitorch.int64, device=device)], 1.0)
    with pytest.raises(TypeError, match="one dtype, got float32 and float64"):
        _C._clip_grad_norm_foreach([g, minitorch.ones(2, dtype=minitorch.float64, device=device)], 1.0)
    with pytest.raises(RuntimeError, match="needs contiguous gradients"):
        _C._clip_grad_norm_foreach([minitorch.ones(3, 4, device=device).t()], 1.0)


def test_the_step_bumps_each_gradients_version(device):
    ps = grads_of(arrays(3), minitorch.float32, device)
    before = [p.grad._version for p in ps]
    clip_grad_norm_(ps, 0.1)
    assert all(p.grad._version > v for p, v in zip(ps, before) if p.grad.numel())


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_more_gradients_than_one_table_holds_on_cuda():
    """30 gradients (a table holds 24): two measuring launches, one finish, two scaling;
    a gradient of more than one chunk (65536 elements) is measured by several blocks."""
    from minitorch.profiler import ProfilerActivity, profile

    rng = np.random.default_rng(4)
    arrs = [rng.standard_normal((5, 7)) for _ in range(29)] + [rng.standard_normal(70_000)]
    ps = grads_of(arrs, minitorch.float32, "cuda")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        total = clip_grad_norm_(ps, 2.0)
    names = [k.name for e in prof.events() for k in e.kernels]
    assert len(names) == 5, names
    flat = np.concatenate([a.astype(np.float32).ravel() for a in arrs]).astype(np.float64)
    want = np.sqrt((flat ** 2).sum())
    np.testing.assert_allclose(total.item(), want, rtol=1e-5)
    for p, a in zip(ps, arrs):
        np.testing.assert_allclose(to_np(p.grad), a.astype(np.float32) * (2.0 / (want + 1e-6)), rtol=1e-5, atol=1e-7)
