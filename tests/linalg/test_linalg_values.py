"""minitorch.linalg against numpy.linalg: every function on cpu and cuda (the emulator runs
it on a host copy), float64 and float32, one matrix and batches, non-contiguous inputs and
empty batches. Factorizations that are unique only up to signs (qr, eigh, svd) are checked
by what is unique: the reconstruction, orthonormality, the values."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import DEVICES

LA = minitorch.linalg
TOL = {"float64": dict(rtol=1e-9, atol=1e-10), "float32": dict(rtol=2e-4, atol=2e-5)}
DTYPES = ["float64", "float32"]


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


def t(arr, dtype, device):
    return minitorch.tensor(np.asarray(arr, dtype=np.float64), dtype=getattr(minitorch, dtype), device=device)


def close(got, want, dtype, scale=1.0):
    tol = TOL[dtype]
    np.testing.assert_allclose(got.cpu().numpy().astype(np.float64), want, rtol=tol["rtol"] * scale,
                               atol=tol["atol"] * scale)


def well_conditioned(rng, *shape):
    """Random (..., n, n) matrices with a strong diagonal (condition number ~ a few)."""
    n = shape[-1]
    return rng.standard_normal(shape) + 3 * np.eye(n)


def spd(rng, *shape):
    a = rng.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (2, 1, 3, 3), (1, 1)])
def test_solve_inv_det_slogdet(device, dtype, shape):
    rng = np.random.default_rng(0)
    a = well_conditioned(rng, *shape)
    b = rng.standard_normal(shape[:-1] + (2,))
    A, B = t(a, dtype, device), t(b, dtype, device)
    close(LA.solve(A, B), np.linalg.solve(a, b), dtype)
    close(LA.inv(A), np.linalg.inv(a), dtype)
    close(LA.det(A), np.linalg.det(a), dtype, scale=10)
    sign, logabs = LA.slogdet(A)
    s_np, l_np = np.linalg.slogdet(a)
    close(sign, s_np, dtype)
    close(logabs, l_np, dtype)
    res = LA.slogdet(A)
    assert res._fields == ("sign", "logabsdet") and res.sign is res[0]
    assert LA.solve(A, B).dtype == A.dtype and LA.det(A).device == A.device


def test_solve_vector_broadcast_left(device):
    rng = np.random.default_rng(1)
    a = well_conditioned(rng, 2, 3, 3)
    v = rng.standard_normal(3)
    A = t(a, "float64", device)
    close(LA.solve(A, t(v, "float64", device)), np.linalg.solve(a, v[None, :, None].repeat(2, 0))[..., 0], "float64")
    vb = rng.standard_normal((2, 3))  # a batch of vectors: (..., n) with A's batch
    close(LA.solve(A, t(vb, "float64", device)), np.linalg.solve(a, vb[..., None])[..., 0], "float64")
    bm = rng.standard_normal((4, 1, 3, 2))  # batch dims broadcast: (4, 1) with (2,)
    close(LA.solve(A, t(bm, "float64", device)), np.linalg.solve(a, bm), "float64")
    br = rng.standard_normal((2, 5, 3))
    close(LA.solve(A, t(br, "float64", device), left=False), br @ np.linalg.inv(a), "float64")


def test_non_contiguous_inputs(device):
    rng = np.random.default_rng(2)
    a = well_conditioned(rng, 2, 4, 4)
    A = t(a, "float64", device).mT  # a transposed view
    assert not A.is_contiguous()
    at = np.swapaxes(a, -1, -2)
    close(LA.inv(A), np.linalg.inv(at), "float64")
    close(LA.det(A), np.linalg.det(at), "float64")
    big = t(rng.standard_normal((4, 6)), "float64", device)
    sl = big[:, ::2]  # strided columns
    close(LA.svdvals(sl), np.linalg.svd(sl.cpu().numpy(), compute_uv=False), "float64")
    s = spd(rng, 3, 3)
    S = t(s, "float64", device).mT
    close(LA.cholesky(S), np.linalg.cholesky(s.T), "float64")


@pytest.mark.parametrize("dtype", DTYPES)
def test_cholesky(device, dtype):
    rng = np.random.default_rng(3)
    s = spd(rng, 2, 4, 4)
    A = t(s, dtype, device)
    close(LA.cholesky(A), np.linalg.cholesky(s), dtype, scale=5)
    close(LA.cholesky(A, upper=True), np.swapaxes(np.linalg.cholesky(s), -1, -2), dtype, scale=5)
    l, info = LA.cholesky_ex(A)
    close(l, np.linalg.cholesky(s), dtype, scale=5)
    assert info.dtype == minitorch.int64 and info.tolist() == [0, 0]
    # only the lower triangle is read
    junk = s + np.triu(np.full((4, 4), 7.0), 1)
    close(LA.cholesky(t(junk, dtype, device)), np.linalg.cholesky(s), dtype, scale=5)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 6, 2)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr(device, dtype, shape, mode):
    rng = np.random.default_rng(4)
    a = rng.standard_normal(shape)
    q, r = LA.qr(t(a, dtype, device), mode=mode)
    q_np, r_np = np.linalg.qr(a, mode=mode) if len(shape) == 2 else (None, None)
    m, n = shape[-2:]
    k = min(m, n) if mode == "reduced" else m
    assert tuple(q.shape) == shape[:-2] + (m, k) and tuple(r.shape) == shape[:-2] + (k, n)
    qn, rn = q.cpu().numpy().astype(np.float64), r.cpu().numpy().astype(np.float64)
    np.testing.assert_allclose(qn @ rn, a, **TOL[dtype])
    np.testing.assert_allclose(np.swapaxes(qn, -1, -2) @ qn, np.broadcast_to(np.eye(k), qn.shape[:-2] + (k, k)),
                               **TOL[dtype])
    assert np.all(np.tril(rn, -1) == 0)
    if q_np is not None:  # LAPACK's signs are numpy's (the same geqrf)
        np.testing.assert_allclose(np.abs(rn), np.abs(r_np), **TOL[dtype])
    r_only = LA.qr(t(a, dtype, device), mode="r")  # the reduced R, and an empty Q
    assert r_only.Q.numel() == 0
    close(r_only.R, rn[..., :min(m, n), :], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh_eigvalsh(device, dtype):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 4, 4))
    s = x + np.swapaxes(x, -1, -2)
    A = t(s, dtype, device)
    w, v = LA.eigh(A)
    w_np = np.linalg.eigvalsh(s)
    close(w, w_np, dtype, scale=5)
    vn = v.cpu().numpy().astype(np.float64)
    np.testing.assert_allclose(vn @ (w_np[..., :, None] * np.swapaxes(vn, -1, -2)), s, rtol=1e-3 if dtype == "float32"
                               else 1e-9, atol=1e-4 if dtype == "float32" else 1e-9)
    close(LA.eigvalsh(A), w_np, dtype, scale=5)
    # UPLO: which triangle is read
    lower_only = np.tril(s) + np.triu(np.full((4, 4), 9.0), 1)
    close(LA.eigvalsh(t(lower_only, dtype, device)), w_np, dtype, scale=5)
    upper_only = np.triu(s) + np.tril(np.full((4, 4), 9.0), -1)
    close(LA.eigh(t(upper_only, dtype, device), UPLO="U").eigenvalues, w_np, dtype, scale=5)
    assert LA.eigh(A)._fields == ("eigenvalues", "eigenvectors")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_svdvals(device, dtype, shape, full):
    rng = np.random.default_rng(6)
    a = rng.standard_normal(shape)
    u, s, vh = LA.svd(t(a, dtype, device), full_matrices=full)
    u_np, s_np, vh_np = np.linalg.svd(a, full_matrices=full)
    assert tuple(u.shape) == u_np.shape and tuple(vh.shape) == vh_np.shape
    close(s, s_np, dtype, scale=5)
    k = s_np.shape[-1]
    un, vhn = u.cpu().numpy().astype(np.float64), vh.cpu().numpy().astype(np.float64)
    np.testing.assert_allclose((un[..., :, :k] * s_np[..., None, :]) @ vhn[..., :k, :], a, rtol=1e-3, atol=1e-4)
    close(LA.svdvals(t(a, dtype, device)), s_np, dtype, scale=5)
    assert LA.svd(t(a, dtype, device))._fields == ("U", "S", "Vh")


@pytest.mark.parametrize("dtype", DTYPES)
def test_pinv_lstsq_matrix_rank(device, dtype):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((2, 6, 3))
    b = rng.standard_normal((2, 6, 2))
    A, B = t(a, dtype, device), t(b, dtype, device)
    close(LA.pinv(A), np.linalg.pinv(a), dtype, scale=10)
    res = LA.lstsq(A, B)
    x_np = np.linalg.lstsq(a[0], b[0], rcond=None)[0]
    close(res.solution[0], x_np, dtype, scale=10)
    assert res._fields == ("solution", "residuals", "rank", "singular_values")
    close(res.residuals, ((a @ np.linalg.pinv(a) @ b - b) ** 2).sum(-2), dtype, scale=100)
    if device == "cpu":
        assert res.rank.tolist() == [3, 3] and res.singular_values.numel() == 0
        sv = LA.lstsq(A, B, driver="gelsd").singular_values
        close(sv, np.linalg.svd(a, compute_uv=False), dtype, scale=5)
    # rank-deficient: the third column repeats the first
    d = a.copy()
    d[..., 2] = d[..., 0]
    D = t(d, dtype, device)
    assert LA.matrix_rank(D).tolist() == [2, 2]
    assert LA.matrix_rank(A).tolist() == [3, 3]
    assert LA.matrix_rank(A, atol=1e9).tolist() == [0, 0]
    close(LA.pinv(D), np.linalg.pinv(d), dtype, scale=100)
    s = spd(rng, 4, 4)
    close(LA.pinv(t(s, dtype, device), hermitian=True), np.linalg.inv(s), dtype, scale=10)
    assert LA.matrix_rank(t(s, dtype, device), hermitian=True).item() == 4


@pytest.mark.parametrize("dtype", DTYPES)
def test_norms(device, dtype):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 3, 4))
    X = t(x, dtype, device)
    for ord_ in (2, 1, 3, float("inf"), -float("inf"), 0):
        close(LA.vector_norm(X, ord_), np.linalg.norm(x.ravel(), ord_), dtype)
        close(LA.vector_norm(X, ord_, dim=-1), np.linalg.norm(x, ord_, axis=-1), dtype)
    close(LA.vector_norm(X, 2, dim=(0, 2), keepdim=True),
          np.sqrt((x ** 2).sum(axis=(0, 2), keepdims=True)), dtype)
    for ord_ in ("fro", "nuc", 1, -1, 2, -2, float("inf"), -float("inf")):
        close(LA.matrix_norm(X, ord_), np.linalg.norm(x, ord_, axis=(-2, -1)), dtype, scale=5)
        close(LA.matrix_norm(X, ord_, dim=(0, 2)), np.linalg.norm(x, ord_, axis=(0, 2)), dtype, scale=5)
        close(LA.matrix_norm(X, ord_, keepdim=True), np.linalg.norm(x, ord_, axis=(-2, -1), keepdims=True), dtype,
              scale=5)
    m = x[0]
    close(LA.norm(X), np.linalg.norm(x.ravel()), dtype)
    close(LA.norm(t(m, dtype, device), "nuc"), np.linalg.norm(m, "nuc"), dtype, scale=5)
    close(LA.norm(t(m, dtype, device), 2), np.linalg.norm(m, 2), dtype, scale=5)
    close(LA.norm(X, 1, dim=1), np.linalg.norm(x, 1, axis=1), dtype)
    close(LA.norm(X, dim=(1, 2)), np.linalg.norm(x, axis=(1, 2)), dtype)


def test_empty_batches_and_matrices(device):
    e = t(np.zeros((0, 3, 3)), "float64", device)
    assert tuple(LA.inv(e).shape) == (0, 3, 3)
    assert tuple(LA.det(e).shape) == (0,)
    assert tuple(LA.solve(e, t(np.zeros((0, 3, 2)), "float64", device)).shape) == (0, 3, 2)
    assert tuple(LA.cholesky(e).shape) == (0, 3, 3)
    assert tuple(LA.eigh(e).eigenvalues.shape) == (0, 3)
    u, s, vh = LA.svd(t(np.zeros((2, 0, 4, 3)), "float64", device))
    assert tuple(u.shape) == (2, 0, 4, 4) and tuple(s.shape) == (2, 0, 3) and tuple(vh.shape) == (2, 0, 3, 3)
    q, r = LA.qr(t(np.zeros((0, 4, 2)), "float64", device))
    assert tuple(q.shape) == (0, 4, 2) and tuple(r.shape) == (0, 2, 2)
    z = t(np.zeros((2, 0, 0)), "float64", device)  # 0 x 0 matrices: det 1, empty inverse
    assert LA.det(z).tolist() == [1.0, 1.0]
    assert tuple(LA.inv(z).shape) == (2, 0, 0)
    assert tuple(LA.pinv(t(np.zeros((3, 0)), "float64", device)).shape) == (0, 3)


def test_singular_det_and_slogdet(device):
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    A = t(a, "float64", device)
    assert LA.det(A).item() == 0.0
    sign, logabs = LA.slogdet(A)
    assert sign.item() == 0.0 and logabs.item() == -float("inf")
    p = np.array([[0.0, 1.0], [1.0, 0.0]])  # a row swap: det -1
    assert LA.det(t(p, "float64", device)).item() == pytest.approx(-1.0)


def test_top_level_forms(device):
    rng = np.random.default_rng(9)
    a = rng.standard_normal((5, 3))
    A = t(a, "float64", device)
    u, s, v = minitorch.svd(A)  # some=True: reduced, and V rather than Vh
    assert tuple(u.shape) == (5, 3) and tuple(v.shape) == (3, 3)
    np.testing.assert_allclose(((u * s[None, :]) @ v.mT).cpu().numpy(), a, atol=1e-10)
    assert A.svd()._fields == ("U", "S", "V")
    u0, s0, v0 = A.svd(compute_uv=False)
    assert tuple(u0.shape) == (5, 5) and tuple(v0.shape) == (3, 3) and u0.abs().sum().item() == 0
    close(s0, np.linalg.svd(a, compute_uv=False), "float64")
    q, r = minitorch.qr(A, some=False)
    assert tuple(q.shape) == (5, 5) and tuple(r.shape) == (5, 3)
    spd_ = spd(rng, 3, 3)
    S = t(spd_, "float64", device)
    close(S.cholesky(upper=True), np.linalg.cholesky(spd_).T, "float64")
    close(minitorch.inverse(S), np.linalg.inv(spd_), "float64")
    close(S.logdet(), np.log(np.linalg.det(spd_)), "float64")
    assert np.isnan(t([[0.0, 1.0], [1.0, 0.0]], "float64", device).logdet().item())  # det -1
    close(A.pinverse(), np.linalg.pinv(a), "float64")


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("unitriangular", [False, True])
def test_solve_triangular(device, upper, unitriangular):
    rng = np.random.default_rng(10)
    a = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    tri = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        tri = tri - np.diagonal(tri, 0, -2, -1)[..., None] * np.eye(3) + np.eye(3)
    b, bl = rng.standard_normal((2, 3, 2)), rng.standard_normal((4, 1, 5, 3))
    A = t(a, "float64", device)  # the other triangle holds values that must be ignored
    close(LA.solve_triangular(A, t(b, "float64", device), upper=upper, unitriangular=unitriangular),
          np.linalg.solve(tri, b), "float64")
    close(LA.solve_triangular(A, t(bl, "float64", device), upper=upper, left=False, unitriangular=unitriangular),
          bl @ np.linalg.inv(tri), "float64")
