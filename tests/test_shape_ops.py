"""cat / stack / split / chunk / unbind / flip / repeat / roll / narrow, masked_fill /
tril / triu, var / std / logsumexp / norm / amax, bmm / baddbmm / outer / einsum,
cumsum / cumprod, sort / argsort / topk: values against NumPy on every device
(non-contiguous inputs and size-0/1 dims included), float64 gradcheck, errors."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch
from minitorch.testing import assert_close, gradcheck
from conftest import CUDA_SKIP_REASON, TORCH_SKIP_REASON
from minitorch.profiler import ProfilerActivity, profile


def arr(shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def T(a, device, grad=False):
    return minitorch.tensor(a, device=device, requires_grad=grad)


# ------------------------------------------------------------ cat / stack ----

@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_matches_numpy(device, dim):
    parts = [arr((2, 3, 4), 0), arr((2, 3, 4), 1)]
    shapes = [list(p.shape) for p in parts]
    parts[1] = arr(tuple(s if d != (dim % 3) else 1 for d, s in enumerate(shapes[1])), 2)
    out = minitorch.cat([T(p, device) for p in parts], dim)
    assert_close(out, np.concatenate(parts, dim))


def test_cat_promotes_skips_empty_and_handles_views(device):
    a = T(np.arange(6).reshape(2, 3), device)          # int64
    b = T(arr((3, 2)), device).T                        # float64, non-contiguous (2, 3)
    empty = minitorch.zeros(0, device=device)           # legacy: a (0,) tensor is skipped
    out = minitorch.cat([a, empty, b], 0)
    assert out.dtype == minitorch.float64
    assert_close(out, np.concatenate([np.arange(6).reshape(2, 3), arr((3, 2)).T], 0))
    assert minitorch.cat([a[:0], a], 0).shape == (2, 3)


def test_cat_errors(device):
    a, b = minitorch.zeros(2, 3, device=device), minitorch.zeros(2, 4, device=device)
    with pytest.raises(ValueError, match=r"cat: sizes of tensors must match except in dimension 0"):
        minitorch.cat([a, b], 0)
    with pytest.raises(ValueError, match="same number of dimensions"):
        minitorch.cat([a, minitorch.zeros(2, device=device)], 0)
    with pytest.raises(IndexError):
        minitorch.cat([a, a], 2)
    with pytest.raises(TypeError, match="tuple or list of Tensors"):
        minitorch.cat(a)
    with pytest.raises(ValueError, match="non-empty"):
        minitorch.cat([])
    with pytest.raises(IndexError, match="zero-dimensional"):
        minitorch.cat([minitorch.tensor(1.0), minitorch.tensor(2.0)])


def _offset_view(t):
    """t's values in a (64, 64) view that starts one element into its storage."""
    flat = minitorch.cat([t.flatten()[:1], t.flatten()])
    return flat[1:].view(64, 64)


CAT_UNITS = [  # (dtype, the inputs from a and b, dim, bytes each thread of cat_kernel moves)
    pytest.param(minitorch.float32, lambda a, b: [a, b], 0, 16, id="float32-rows"),
    pytest.param(minitorch.float32, lambda a, b: [a[:, 1:], b[:, 1:]], 0, 4, id="float32-63-wide-views"),
    pytest.param(minitorch.float32, lambda a, b: [_offset_view(a), b], 0, 4, id="float32-storage-offset"),
    pytest.param(minitorch.float32, lambda a, b: [a, b[:1]], 0, 16, id="float32-one-row"),
    pytest.param(minitorch.float16, lambda a, b: [a, b], 1, 2, id="float16-columns"),
    pytest.param(minitorch.float16, lambda a, b: [a.view(8, 8, 64), b.view(8, 8, 64)], 1, 16, id="float16-middle"),
    pytest.param(minitorch.int8, lambda a, b: [a, b], 0, 16, id="int8"),
    pytest.param(minitorch.float64, lambda a, b: [a, b, a], 0, 16, id="float64"),
    pytest.param(minitorch.bool, lambda a, b: [a[::2], b], 0, 16, id="bool-every-other-row"),
]


@pytest.mark.parametrize("dtype, parts, dim, unit", CAT_UNITS)
def test_cat_moves_the_widest_unit_every_input_allows(dtype, parts, dim, unit):
    """cuda's cat moves up to 16 bytes per thread where every address allows it (issue 31: cat at
    memory speed): the launch's grid says how many units it moved."""
    if not minitorch.cuda.is_available():
        pytest.skip(CUDA_SKIP_REASON)
    rng = np.random.default_rng(5)
    a, b = (minitorch.tensor(rng.integers(-50, 50, (64, 64))).to(dtype) for _ in range(2))
    want = np.concatenate([p.numpy() for p in parts(a, b)], dim)
    inputs = [p.to("cuda") if p.is_contiguous() else p for p in parts(a.to("cuda"), b.to("cuda"))]
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        out = minitorch.cat(inputs, dim)
    np.testing.assert_array_equal(out.cpu().numpy(), want)
    (kernel,) = [k for e in prof.events() for k in e.kernels]
    assert kernel.name.startswith("cat_kernel")
    units = want.size * want.itemsize // unit
    assert kernel.grid[0] == -(-units // kernel.block[0]), (kernel.grid, units)


def test_cat_gradcheck(device):
    a, b = T(arr((2, 3), 0), device, True), T(arr((2, 1), 1), device, True)
    assert gradcheck(lambda x, y: minitorch.cat([x, y, x], 1), (a, b))
    out = minitorch.cat([a, b], 1)
    assert out.grad_fn.name() == "CatBackward0"


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_stack_matches_numpy(device, dim):
    parts = [arr((2, 3), k) for k in range(3)]
    assert_close(minitorch.stack([T(p, device) for p in parts], dim), np.stack(parts, dim))


def test_stack_errors_and_grad(device):
    with pytest.raises(ValueError, match=r"stack expects each tensor to be equal size|equal size"):
        minitorch.stack([minitorch.zeros(2, device=device), minitorch.zeros(3, device=device)])
    a, b = T(arr((3,), 0), device, True), T(arr((3,), 1), device, True)
    assert gradcheck(lambda x, y: minitorch.stack([x, y], 1), (a, b))


# ------------------------------------------------------- split / chunk ----

@given(n=st.integers(0, 7), size=st.integers(1, 4))
def test_split_sizes_match_torch_rule(device, n, size):
    x = minitorch.arange(n * 2, device=device).reshape(n, 2)
    pieces = x.split(size)
    expect = [min(size, n - s) for s in range(0, n, size)] or [0]
    assert [p.shape[0] for p in pieces] == (expect if n else [0])
    if n:
        assert_close(minitorch.cat(pieces, 0), x)


def test_split_sections_chunk_unbind(device):
    a = arr((5, 6))
    x = T(a, device)
    assert [p.shape[1] for p in x.split([1, 2, 3], dim=1)] == [1, 2, 3]
    assert_close(x.split([1, 2, 3], 1)[2], a[:, 3:])
    assert [p.shape[1] for p in x.chunk(4, 1)] == [2, 2, 2]  # ceil(6/4)=2: only three chunks, as PyTorch
    assert [p.shape[0] for p in x.chunk(2)] == [3, 2]
    rows = x.unbind(0)
    assert len(rows) == 5 and rows[3].shape == (6,)
    assert_close(rows[3], a[3])
    assert_close(minitorch.unbind(x, 1)[5], a[:, 5])
    with pytest.raises(ValueError, match="must sum"):
        x.split([1, 2], 1)
    with pytest.raises(ValueError, match="greater than 0"):
        x.chunk(0)


def test_split_gradients_one_node(device):
    x = T(arr((4, 8)), device, True)
    assert gradcheck(lambda t: t.chunk(4, 1)[1] * 2 + t.chunk(4, 1)[3], (x,))
    i, f, g, o = x.chunk(4, 1)
    assert i.grad_fn is f.grad_fn and i.grad_fn.name() == "SplitWithSizesBackward0"
    (i.sum() + 3 * o.sum()).backward()          # unused pieces get zeros
    expect = np.zeros((4, 8))
    expect[:, :2] = 1
    expect[:, 6:] = 3
    assert_close(x.grad, expect)
    assert gradcheck(lambda t: minitorch.stack(t.unbind(1)[::-1], 1), (x,))


# ---------------------------------------------------- flip / repeat / roll ----

def test_flip_repeat_roll_narrow(device):
    a = arr((3, 4, 2))
    x = T(a, device)
    assert_close(x.flip(0, 2), np.flip(a, (0, 2)))
    assert_close(minitorch.flip(x, [-2]), np.flip(a, -2))
    assert_close(x.repeat(2, 1, 3), np.tile(a, (2, 1, 3)))
    assert_close(x.repeat(2, 1, 1, 1).shape == (2, 3, 4, 2), True)
    assert_close(minitorch.tensor([1, 2]).repeat(2, 2), np.tile([1, 2], (2, 2)))
    assert_close(x.roll(1, 0), np.roll(a, 1, 0))
    assert_close(x.roll((-1, 5), (1, 2)), np.roll(a, (-1, 5), (1, 2)))
    assert_close(x.roll(3), np.roll(a, 3))
    assert_close(x.narrow(1, 1, 2), a[:, 1:3])
    assert_close(x.T.flip(0), np.flip(a.T, 0))  # a permuted (non-contiguous) input
    with pytest.raises(ValueError, match="repeat"):
        x.repeat(2, 2)
    with pytest.raises(IndexError, match="narrow"):
        x.narrow(1, 3, 2)


def test_flip_repeat_roll_gradcheck(device):
    x = T(arr((3, 2)), device, True)
    assert gradcheck(lambda t: t.flip(0, 1), (x,))
    assert gradcheck(lambda t: t.repeat(2, 3), (x,))
    assert gradcheck(lambda t: t.roll(1, 0) * t, (x,))


# ----------------------------------------------------------------- masks ----

def test_masked_fill_tril_triu(device):
    a = arr((2, 4, 5))
    x = T(a, device)
    m = np.random.default_rng(3).random((4, 5)) > 0.5
    assert_close(x.masked_fill(T(m, device), -1.5), np.where(m, -1.5, a))
    assert_close(x.masked_fill(T(m, device), minitorch.tensor(2.0, device=device)), np.where(m, 2.0, a))
    for k in (-2, 0, 1, 7):
        assert_close(x.tril(k), np.tril(a, k))
        assert_close(minitorch.triu(x, k), np.triu(a, k))
    causal = minitorch.ones(3, 3, dtype=minitorch.bool, device=device).tril()
    scores = minitorch.zeros(3, 3, device=device).masked_fill(~causal, float("-inf"))
    assert_close(scores.softmax(-1), np.tril(np.ones((3, 3))) / np.arange(1, 4)[:, None])
    with pytest.raises(TypeError, match="bool mask"):
        x.masked_fill(T(m.astype(np.int64), device), 0.0)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        minitorch.ones(3, device=device).tril()


def test_masked_fill_tril_gradcheck(device):
    x = T(arr((3, 3)), device, True)
    m = T(np.eye(3, dtype=bool), device)
    assert gradcheck(lambda t: t.masked_fill(m, 0.5).tril(-1) + t.triu(1), (x,))
    v = minitorch.tensor(0.3, dtype=minitorch.float64, device=device, requires_grad=True)
    assert gradcheck(lambda t, s: t.masked_fill(m, s), (x, v))


# ------------------------------------------------------------ statistics ----

@pytest.mark.parametrize("dim,correction", [(None, 1), (0, 1), ((0, 2), 0), (-1, 2)])
def test_var_std(device, dim, correction):
    a = arr((3, 4, 5))
    x = T(a, device)
    npdim = dim if dim is None or isinstance(dim, int) else tuple(dim)
    assert_close(x.var(dim, correction=correction), a.var(npdim, ddof=correction))
    assert_close(minitorch.std(x, dim, correction=correction, keepdim=True),
                 a.std(npdim, ddof=correction, keepdims=True))
    assert_close(x.var(dim, unbiased=False) if dim is not None else x.var(False), a.var(npdim))
    v, m = minitorch.var_mean(x, dim)
    assert_close(m, a.mean(npdim))


def test_var_edge_cases_and_grad(device):
    x = T(arr((4, 3)), device, True)
    assert gradcheck(lambda t: t.var(0), (x,))
    assert gradcheck(lambda t: t.std(1, keepdim=True), (x,))
    one = minitorch.tensor([2.0], device=device).var()
    assert math.isnan(one.item()) or math.isinf(one.item())   # N - 1 = 0: PyTorch gives nan
    with pytest.raises(TypeError, match="floating"):
        minitorch.tensor([1, 2, 3], device=device).var()


def test_logsumexp_stable(device):
    a = arr((3, 4)) * 50 + 1000.0
    x = T(a, device)
    ref = a.max(1) + np.log(np.exp(a - a.max(1, keepdims=True)).sum(1))
    assert_close(x.logsumexp(1), ref)
    assert_close(minitorch.logsumexp(x, (0, 1), keepdim=True).reshape(()), np.log(np.exp(a - a.max()).sum()) + a.max())
    neg = T(np.full((2, 3), -np.inf), device)
    assert np.all(np.isneginf(neg.logsumexp(1).cpu().numpy()))
    y = T(arr((3, 4)), device, True)
    assert gradcheck(lambda t: t.logsumexp(-1), (y,))


@pytest.mark.parametrize("p", [2, "fro", 1, 3, math.inf, -math.inf, 0])
def test_norm(device, p):
    a = arr((3, 4))
    x = T(a, device)
    q = 2 if p == "fro" else p
    ref_all = np.linalg.norm(a.ravel(), q)
    assert_close(x.norm(p), ref_all)
    if p != "fro":
        assert_close(minitorch.norm(x, p, dim=1), np.linalg.norm(a, q, axis=1))
        assert_close(x.norm(p, dim=0, keepdim=True), np.linalg.norm(a, q, axis=0, keepdims=True))


def test_norm_gradients(device):
    x = T(arr((3, 4)), device, True)
    for p in (2, 1.5, 3, math.inf):
        assert gradcheck(lambda t: t.norm(p, dim=1), (x,))
    z = minitorch.zeros(3, dtype=minitorch.float64, device=device, requires_grad=True)
    z.norm().backward()
    assert_close(z.grad, np.zeros(3))   # PyTorch: zero, not NaN, at the origin


def test_amax_amin(device):
    a = arr((3, 4, 2))
    x = T(a, device)
    assert_close(x.amax((0, 2)), a.max((0, 2)))
    assert_close(minitorch.amin(x, 1, keepdim=True), a.min(1, keepdims=True))
    assert_close(x.amax(), a.max())


# -------------------------------------------------------------- products ----

def test_bmm_baddbmm_outer(device):
    a, b, c = arr((2, 3, 4), 0), arr((2, 4, 5), 1), arr((2, 3, 5), 2)
    assert_close(minitorch.bmm(T(a, device), T(b, device)), a @ b)
    assert_close(minitorch.baddbmm(T(c, device), T(a, device), T(b, device), beta=0.5, alpha=2.0), 0.5 * c + 2 * a @ b)
    nan = T(np.full((2, 3, 5), np.nan), device)
    assert_close(nan.baddbmm(T(a, device), T(b, device), beta=0), a @ b)
    u, v = arr((3,), 3), arr((4,), 4)
    assert_close(minitorch.outer(T(u, device), T(v, device)), np.outer(u, v))
    with pytest.raises(ValueError, match="bmm"):
        minitorch.bmm(T(a, device), T(a, device))
    with pytest.raises(ValueError, match="3-D"):
        minitorch.bmm(T(a[0], device), T(b[0], device))
    xs = [T(m, device, True) for m in (a, b, c)]
    assert gradcheck(lambda i, p, q: i.baddbmm(p, q, alpha=0.5), (xs[2], xs[0], xs[1]))


@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("ij->", [(3, 4)]),
    ("ij->ji", [(3, 4)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ab,cd", [(2, 3), (4, 5)]),
])
def test_einsum_matches_numpy(device, eq, shapes):
    arrays = [arr(s, k) for k, s in enumerate(shapes)]
    out = minitorch.einsum(eq, *[T(a, device) for a in arrays])
    assert_close(out, np.einsum(eq, *arrays))
    assert_close(minitorch.einsum(eq, [T(a, device) for a in arrays]), np.einsum(eq, *arrays))


def test_einsum_grad_and_errors(device):
    a, b = T(arr((2, 3), 0), device, True), T(arr((3, 4), 1), device, True)
    assert gradcheck(lambda x, y: minitorch.einsum("ij,jk->ki", x, y), (a, b))
    with pytest.raises(ValueError, match="einsum"):
        minitorch.einsum("ij,jk->ik", a)
    with pytest.raises(ValueError, match="einsum"):
        minitorch.einsum("ijk->i", a)
    with pytest.raises(ValueError, match="size"):
        minitorch.einsum("ij,ij->i", a, b)


# ------------------------------------------------------------------ scans ----

@pytest.mark.parametrize("shape,dim", [((5,), 0), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4), 1), ((2, 0, 3), 1), ((), 0)])
def test_cumsum_cumprod(device, shape, dim):
    a = arr(shape) if shape else np.array(1.5)
    x = T(a, device)
    assert_close(x.cumsum(dim), np.cumsum(a, dim) if shape else a)
    assert_close(minitorch.cumprod(x, dim), np.cumprod(a, dim) if shape else a)


def test_cumsum_dtypes_and_views(device):
    b = T(np.array([True, False, True]), device)
    assert b.cumsum(0).dtype == minitorch.int64 and b.cumsum(0).tolist() == [1, 1, 2]
    i = T(np.arange(5), device)
    assert i.cumsum(0, dtype=minitorch.float32).dtype == minitorch.float32
    a = arr((3, 4))
    assert_close(T(a, device).T.cumsum(1), np.cumsum(a.T, 1))


def test_cumsum_cumprod_gradcheck(device):
    x = T(arr((3, 4)), device, True)
    assert gradcheck(lambda t: t.cumsum(1), (x,))
    assert gradcheck(lambda t: t.cumprod(0), (x,))
    # zeros in the line: the exact formula (PyTorch's), not x / x
    z = T(np.array([[2.0, 0.0, 3.0, 0.0, 4.0], [0.0, 1.5, 2.0, 0.5, 1.0]]), device, True)
    assert gradcheck(lambda t: t.cumprod(1), (z,))


# ------------------------------------------------------------------- sort ----

def test_sort_argsort_topk(device):
    a = np.array([[3.0, 1.0, np.nan, 1.0, -2.0], [0.0, 5.0, 5.0, -1.0, 2.0]])
    x = T(a, device)
    v, i = x.sort()
    assert_close(v, np.sort(a, 1), equal_nan=True)
    assert i.tolist() == np.argsort(a, 1, kind="stable").tolist()
    v, i = minitorch.sort(x, dim=1, descending=True)
    # descending, stable: NaN first, equal values keep their order
    assert i.tolist() == [[2, 0, 1, 3, 4], [1, 2, 4, 0, 3]]
    assert minitorch.argsort(x, 0).tolist() == np.argsort(a, 0, kind="stable").tolist()
    tv, ti = T(arr((4, 6)), device).topk(3, dim=1)
    ref = np.sort(arr((4, 6)), 1)[:, ::-1][:, :3]
    assert_close(tv, ref)
    assert_close(minitorch.topk(T(arr((4, 6)), device), 2, largest=False).values, np.sort(arr((4, 6)), 1)[:, :2])
    ints = T(np.array([3, 1, 2]), device)
    assert ints.sort().values.tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="topk"):
        x.topk(6)


def test_sort_gradcheck(device):
    x = T(arr((3, 5)), device, True)
    assert gradcheck(lambda t: t.sort(1, descending=True).values, (x,))
    assert gradcheck(lambda t: t.topk(2, dim=0).values, (x,))


# --------------------------------------------------------- against torch ----

def test_against_torch_when_installed(device):
    torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)
    a = arr((2, 3, 4))
    x, t = T(a, device), torch.tensor(a)
    assert_close(x.var(1), t.var(1).numpy())
    assert_close(x.std((0, 2), correction=0), t.std((0, 2), unbiased=False).numpy())
    assert_close(x.logsumexp(2), torch.logsumexp(t, 2).numpy())
    assert_close(x.norm(dim=1), t.norm(dim=1).numpy())
    assert [p.shape[2] for p in x.chunk(3, 2)] == [p.shape[2] for p in t.chunk(3, 2)]
    assert_close(x.roll(2, 1), t.roll(2, 1).numpy())
    assert_close(x.cumprod(2), t.cumprod(2).numpy())
    assert_close(minitorch.einsum("bij,bkj->bik", x, x), torch.einsum("bij,bkj->bik", t, t).numpy())


def test_flip_takes_dims_as_a_keyword():
    x = minitorch.arange(6).reshape(2, 3)
    assert x.flip(dims=[0, 1]).tolist() == x.flip(0, 1).tolist() == [[5, 4, 3], [2, 1, 0]]
    assert minitorch.flip(x, dims=(1,)).tolist() == [[2, 1, 0], [5, 4, 3]]
    with pytest.raises(TypeError, match="multiple values"):
        x.flip(0, dims=[1])
