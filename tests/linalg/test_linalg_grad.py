"""float64 gradcheck of every differentiable function of minitorch.linalg (the formulas in
python/minitorch/linalg/_functions.py). Functions of symmetric matrices (cholesky, eigh)
are checked through X -> X X^T + n I or X + X^T, and the factorizations unique only up to
signs (qr, eigh, svd) through functions that do not depend on those signs, as PyTorch's
own tests do."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import DEVICES
from minitorch.testing import gradcheck

LA = minitorch.linalg


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


def leaf(arr, device):
    return minitorch.tensor(np.asarray(arr, dtype=np.float64), dtype=minitorch.float64, device=device,
                            requires_grad=True)


def rng():
    return np.random.default_rng(11)


def sym_pd(x):
    n = x.shape[-1]
    return x @ x.mT + n * minitorch.eye(n, dtype=x.dtype, device=x.device)


def test_solve_inv_grad(device):
    r = rng()
    a = leaf(r.standard_normal((2, 3, 3)) + 3 * np.eye(3), device)
    b = leaf(r.standard_normal((2, 3, 2)), device)
    gradcheck(LA.solve, (a, b))
    gradcheck(lambda a, v: LA.solve(a, v), (a, leaf(r.standard_normal(3), device)))  # broadcast vector
    gradcheck(lambda a, b: LA.solve(a, b, left=False), (a, leaf(r.standard_normal((2, 4, 3)), device)))
    gradcheck(LA.inv, (a,))


def test_det_slogdet_grad(device):
    r = rng()
    a = leaf(r.standard_normal((2, 3, 3)), device)
    gradcheck(LA.det, (a,))
    gradcheck(lambda a: LA.slogdet(a).logabsdet, (a,))
    singular = leaf([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], device)  # rank 2: the cofactors
    gradcheck(LA.det, (singular,))


def test_cholesky_grad(device):
    x = leaf(rng().standard_normal((2, 3, 3)), device)
    gradcheck(lambda x: LA.cholesky(sym_pd(x)), (x,))
    gradcheck(lambda x: LA.cholesky(sym_pd(x), upper=True), (x,))


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 5)])
def test_qr_grad(device, shape):
    x = leaf(rng().standard_normal((2,) + shape), device)
    # Q R is unique with R's diagonal positive (LAPACK's choice may flip signs): normalize them
    def fn(x):
        q, r = LA.qr(x)
        signs = r.diagonal(0, -2, -1).sign()
        return q * signs[..., None, :], r * signs[..., :, None]
    gradcheck(fn, (x,))


def test_qr_grad_refusals(device):
    x = leaf(rng().standard_normal((4, 3)), device)
    with pytest.raises(RuntimeError, match="mode='complete' and nrows > ncols"):
        LA.qr(x, mode="complete").Q.sum().backward()
    with pytest.raises(RuntimeError, match="mode='r'"):
        LA.qr(x, mode="r").R.sum().backward()


def test_eigh_grad(device):
    x = leaf(rng().standard_normal((2, 4, 4)), device)
    gradcheck(lambda x: LA.eigvalsh(x + x.mT), (x,))
    # V diag(f(w)) V^T does not depend on the eigenvectors' signs
    def fn(x):
        w, v = LA.eigh(x + x.mT)
        return (v * w.exp()[..., None, :]) @ v.mT
    gradcheck(fn, (x,))
    gradcheck(lambda x: LA.eigh(x + x.mT, UPLO="U").eigenvectors.abs(), (x,))


@pytest.mark.parametrize("shape", [(4, 3), (3, 4)])
def test_svd_grad(device, shape):
    x = leaf(rng().standard_normal((2,) + shape), device)
    gradcheck(LA.svdvals, (x,))
    def rebuilt(x):
        u, s, vh = LA.svd(x, full_matrices=False)
        return (u * s.sin()[..., None, :]) @ vh
    gradcheck(rebuilt, (x,))
    gradcheck(lambda x: LA.svd(x, full_matrices=False).U.abs(), (x,))
    gradcheck(lambda x: LA.svd(x, full_matrices=False).Vh.abs(), (x,))
    gradcheck(lambda x: LA.svd(x).S, (x,))  # full_matrices=True


# The battery (tests/opinfo) gradchecks pinv and the norms on every device and layout; here on the CPU.
@pytest.mark.parametrize("device", ["cpu"])
def test_pinv_lstsq_grad(device):
    r = rng()
    a = leaf(r.standard_normal((5, 3)), device)
    gradcheck(LA.pinv, (a,))
    b = leaf(r.standard_normal((5, 2)), device)
    gradcheck(lambda a, b: LA.lstsq(a, b).solution, (a, b))
    gradcheck(lambda x: LA.pinv(x + x.mT, hermitian=True), (leaf(r.standard_normal((3, 3)) + 3 * np.eye(3), device),))


@pytest.mark.parametrize("device", ["cpu"])
def test_norm_grads(device):
    x = leaf(rng().standard_normal((2, 3, 4)), device)
    gradcheck(lambda x: LA.vector_norm(x, 3, dim=-1), (x,))
    gradcheck(lambda x: LA.vector_norm(x), (x,))
    for ord_ in ("fro", "nuc", 2, -2, 1, float("inf")):
        gradcheck(lambda x: LA.matrix_norm(x, ord_), (x,))
    gradcheck(lambda x: LA.norm(x, dim=(0, 2)), (x,))


def test_solve_triangular_grad(device):
    r = rng()
    a = leaf(r.standard_normal((2, 3, 3)) + 3 * np.eye(3), device)
    b = leaf(r.standard_normal((2, 3, 2)), device)
    gradcheck(lambda a, b: LA.solve_triangular(a, b, upper=True), (a, b))
    gradcheck(lambda a, b: LA.solve_triangular(a, b.mT, upper=False, left=False, unitriangular=True), (a, b))
