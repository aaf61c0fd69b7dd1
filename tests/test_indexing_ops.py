"""The indexing ops as C++ ops with one kernel each (ops/indexing.cpp, index_select.cpp,
join.cpp; kernels cpu/indexing.cpp, cuda/indexing.cu): how many launches they make, their
values against NumPy on random shapes (non-contiguous inputs, size-0/1 dims, negative dims,
every dtype they take), float64 gradcheck, and their errors, on every device."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON, launches
from minitorch.testing import assert_close, gradcheck

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "bool"]


def values(shape, dtype, seed=0):
    """Random NumPy values of `shape` that survive a round trip through `dtype`."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype == "int64":
        return rng.integers(-5, 5, shape)
    return np.round(rng.standard_normal(shape) * 4) / 4  # exact in float16 and bfloat16


def T(a, device, dtype=None, grad=False):
    t = minitorch.tensor(np.asarray(a), device=device)
    if dtype is not None:
        t = t.to(getattr(minitorch, dtype))
    return t.requires_grad_() if grad else t


def as_np(t):
    if t.dtype in (minitorch.float16, minitorch.bfloat16):
        t = t.float()
    return t.cpu().numpy()


def np_gather(a, dim, idx):
    out = np.empty(idx.shape, a.dtype)
    for p in np.ndindex(*idx.shape):
        q = list(p)
        q[dim] = idx[p]
        out[p] = a[tuple(q)]
    return out


def np_scatter(a, dim, idx, src, add):
    out = a.copy()
    for p in np.ndindex(*idx.shape):
        q = list(p)
        q[dim] = idx[p]
        out[tuple(q)] = (out[tuple(q)] + src[p]) if add else src[p]
    return out


def unique_rows(rng, size, shape, dim):
    """An index of `shape` whose entries along dim are distinct (scatter without races)."""
    idx = np.empty(shape, np.int64)
    for p in np.ndindex(*(s for d, s in enumerate(shape) if d != dim)):
        line = rng.permutation(size)[:shape[dim]]
        sl = list(p)
        sl.insert(dim, slice(None))
        idx[tuple(sl)] = line
    return idx


# ---------------------------------------------------------------- launch counts ----


needs_cuda = pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)


@needs_cuda
def test_launch_counts():
    d = "cuda"
    x = minitorch.randn(64, 100, device=d)
    idx = minitorch.randint(0, 100, (64, 10), device=d)
    src = minitorch.randn(64, 10, device=d)
    i1 = minitorch.randint(0, 64, (20,), device=d)
    rows = minitorch.randn(20, 100, device=d)
    m = x > 0
    ts = [minitorch.randn(16, 32, device=d) for _ in range(8)]
    most = {  # the old Python compositions: gather 20, scatter_add 21, index_put 22, cat 8
        "gather": (lambda: x.gather(1, idx), 2),
        "scatter_add": (lambda: x.scatter_add(1, idx, src), 2),
        "scatter": (lambda: x.scatter(1, idx, src), 2),
        "index_add": (lambda: x.index_add(0, i1, rows), 2),
        "index_copy": (lambda: x.index_copy(0, i1, rows), 2),
        "index_put": (lambda: x.index_put((i1,), rows, accumulate=True), 2),
        "masked_fill": (lambda: x.masked_fill(m, minitorch.tensor(0.5, device=d)), 1),
        "masked_select": (lambda: x.masked_select(m), 3),
        "nonzero": (lambda: m.nonzero(), 2),
        "cat": (lambda: minitorch.cat(ts, 1), 1),
        "stack": (lambda: minitorch.stack(ts, 0), 1),
    }
    for name, (fn, n) in most.items():
        ks = launches(fn)
        assert 1 <= len(ks) <= n, (name, ks)


def backward_of(fn, x):
    """The call that runs fn(x)'s backward (graph built outside the profiled region)."""
    out = fn(x)
    g = minitorch.ones_like(out)
    return lambda: out.backward(g)


@needs_cuda
def test_direct_kernels_launch_once():
    """gather / index_select / cat read their inputs where they are (strides, any layout) and
    check the indices in the same kernel: one launch each; their backwards one zero fill and
    one scatter-add (atomic on a GPU). Before: index_select 2 (check + rows) or 3 (+ a copy
    of the permuted input), its backward 2 or 4, gather's backward 3, cat of transposed
    inputs 9."""
    d = "cuda"
    x = minitorch.randn(64, 100, device=d)
    xt = minitorch.randn(100, 64, device=d).t()
    idx = minitorch.randint(0, 100, (64, 10), device=d)
    i1 = minitorch.randint(-64, 64, (20,), device=d)
    w = minitorch.randn(50, 8, device=d)
    tokens = minitorch.randint(0, 50, (4, 6), device=d)
    ts = [minitorch.randn(16, 32, device=d) for _ in range(8)]
    one = {
        "gather_phased_kernel": [lambda: x.gather(1, idx), lambda: xt.gather(1, idx)],
        "gather_rows_phased_kernel": [lambda: x.index_select(0, i1), lambda: x[i1],
                               lambda: minitorch.nn.functional.embedding(tokens, w)],  # was 11 (a sync too)
        "cat_kernel": [lambda: minitorch.cat(ts, 0), lambda: minitorch.cat(ts, 1), lambda: minitorch.stack(ts, 2)],
    }
    for name, fns in one.items():
        for fn in fns:
            assert launches(fn) == [name + ("<T>" if name != "cat_kernel" else "<U>")]
    for fn in (lambda: x.index_select(1, i1), lambda: xt.index_select(0, i1), lambda: xt.index_select(-1, i1)):
        assert launches(fn) == ["gather_phased_kernel<T>"]
    tts = [t.t() for t in ts]  # transposed inputs: read through their strides, no packing
    c = minitorch.randn(32, 3, device=d)
    for fn in (lambda: minitorch.cat(tts, 0), lambda: minitorch.stack(tts, 1)):
        assert launches(fn) == ["cat_strided_kernel<U>"]
    assert launches(lambda: minitorch.cat(tts + [c], 1)) == ["cat_kernel<U>"]  # (outer, size) pieces, any strides
    grads = {
        # the kernel follows g's layout: rows of a contiguous g, else strided
        "scatter_add_rows_kernel<T>": [(lambda t: t.index_select(0, i1), x), (lambda t: t.index_select(0, i1), xt),
                                       (lambda t: minitorch.nn.functional.embedding(tokens, t), w)],
        "scatter_kernel<T,kOp>": [(lambda t: t.index_select(1, i1), x), (lambda t: t.index_select(1, i1), xt),
                              (lambda t: t.gather(1, idx), x), (lambda t: t.gather(1, idx), xt)],
    }
    for name, cases in grads.items():
        for fn, t in cases:
            run = backward_of(fn, t.detach().requires_grad_())
            assert launches(run) == ["fill_kernel<T>", name]


@needs_cuda
def test_cat_of_many_inputs_and_odd_layouts_is_right():
    ts = [minitorch.randn(3, k % 4, 5, device="cuda") for k in range(70)]  # more than one launch's worth
    ts[3] = minitorch.randn(5, 2, 3, device="cuda").permute(2, 1, 0)      # read through its strides
    out = minitorch.cat(ts, 1)
    assert_close(out, np.concatenate([t.cpu().numpy() for t in ts], 1))
    nonempty = sum(t.numel() > 0 for t in ts)  # empty inputs take no part; 64 inputs per launch
    assert launches(lambda: minitorch.cat(ts, 1)) == ["cat_strided_kernel<U>"] * (-(-nonempty // 64))
    ts = ts * 2
    assert launches(lambda: minitorch.cat(ts, 1)) == ["cat_strided_kernel<U>"] * 2
    assert_close(minitorch.cat(ts, 1), np.concatenate([t.cpu().numpy() for t in ts], 1))
    # more than 4 dims and a transposed input: that one is packed (a copy), then one cat launch
    ts = [minitorch.randn(2, 1, 2, 3, k + 1, device="cuda") for k in range(3)]
    ts[1] = minitorch.randn(2, 3, 2, 1, 2, device="cuda").permute(2, 3, 0, 1, 4)
    for dim in (4, 2, 0):
        sizes = [t.shape for t in ts]
        if all(s[:dim] + s[dim + 1:] == sizes[0][:dim] + sizes[0][dim + 1:] for s in sizes):
            assert_close(minitorch.cat(ts, dim), np.concatenate([t.cpu().numpy() for t in ts], dim))
    assert launches(lambda: minitorch.cat(ts, 4)) == ["copy_kernel<D,S>", "cat_kernel<U>"]


# -------------------------------------------------------------- against NumPy ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, dim", [((4, 5, 3), 1), ((4, 5, 3), -1), ((6,), 0), ((3, 1, 4), -3), ((2, 0, 3), 2)])
def test_gather_scatter_against_numpy(device, dtype, shape, dim):
    rng = np.random.default_rng(sum(shape) + dim)
    d = dim % len(shape)
    a = values(shape, dtype)
    ishape = tuple(max(s - (k != d), 0) if s else 0 for k, s in enumerate(shape))  # smaller off dim
    ishape = tuple(min(s, shape[k]) if k != d else 3 for k, s in enumerate(ishape))
    idx = rng.integers(0, shape[d], ishape) if shape[d] else np.zeros(ishape, np.int64)
    x = T(a, device, dtype)
    out = x.gather(dim, T(idx, device))
    assert out.dtype == x.dtype and tuple(out.shape) == ishape
    assert_close(as_np(out), np_gather(as_np(x), d, idx))
    # non-contiguous input and index (transposed copies)
    xt = T(np.ascontiguousarray(np.swapaxes(a, 0, -1)), device, dtype).transpose(0, -1)
    it = T(np.ascontiguousarray(np.swapaxes(idx, 0, -1)), device).transpose(0, -1)
    assert_close(as_np(xt.gather(dim, it)), np_gather(as_np(x), d, idx))
    if shape[d] < 3:
        return
    uidx = unique_rows(rng, shape[d], ishape, d)
    src = values(ishape, dtype, 1)
    got = x.scatter(dim, T(uidx, device), T(src, device, dtype))
    assert_close(as_np(got), np_scatter(as_np(x), d, uidx, as_np(T(src, device, dtype)), False))
    if dtype != "bool":
        got = x.scatter_add(dim, T(idx, device), T(src, device, dtype))
        expect = np_scatter(as_np(x).astype(np.float64), d, idx, as_np(T(src, device, dtype)).astype(np.float64), True)
        assert_close(as_np(got).astype(np.float64), expect, atol=0.1 if dtype in ("float16", "bfloat16") else 1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_index_ops_against_numpy(device, dtype):
    a, rows = values((5, 4), dtype), values((3, 4), dtype, 1)
    x = T(a, device, dtype)
    xs = as_np(x)
    r = as_np(T(rows, device, dtype))
    idx = np.array([4, -5, 2])  # negatives count from the end, as in PyTorch
    expect = xs.copy()
    expect[idx] = r
    assert_close(as_np(x.index_copy(0, T(idx, device), T(rows, device, dtype))), expect)
    expect = xs.copy()
    expect[:, [1, 3]] = expect[0, 0]
    assert_close(as_np(x.index_fill(-1, T(np.array([1, -1]), device), x[0, 0])), expect)
    if dtype != "bool":
        expect = xs.astype(np.float64)
        np.add.at(expect, np.array([4, 0, 4]), r.astype(np.float64))
        got = x.index_add(0, T(np.array([4, 0, 4]), device), T(rows, device, dtype))
        assert_close(as_np(got).astype(np.float64), expect)
    # index_put with two index tensors that broadcast, and with a bool mask. No position is named
    # twice: which of two writes lands there is unspecified on a GPU (as in PyTorch), and the
    # emulator's reverse schedule picks the other one than NumPy.
    i, j = np.array([[0], [3]]), np.array([1, 2, 3])
    vals = values((2, 3), dtype, 2)
    expect = xs.copy()
    expect[i, j] = as_np(T(vals, device, dtype))
    got = x.index_put((T(i, device), T(j, device)), T(vals, device, dtype))
    assert_close(as_np(got), expect)
    mask = values((5,), "bool", 3)
    expect = xs.copy()
    expect[mask] = xs[0]
    assert_close(as_np(x.index_put((T(mask, device),), x[0])), expect)
    if dtype not in ("bool",):
        acc = np.zeros(4)
        np.add.at(acc, [1, 1, 3], [1.0, 2.0, 3.0])
        z = minitorch.zeros(4, device=device).to(getattr(minitorch, dtype))
        got = z.index_put((T(np.array([1, 1, 3]), device),), T(np.array([1.0, 2.0, 3.0]), device).to(z.dtype),
                          accumulate=True)
        assert_close(as_np(got).astype(np.float64), acc)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 5), (0, 3), (1,), ()])
def test_masks_and_nonzero_against_numpy(device, dtype, shape):
    a = values(shape, dtype)
    m = values(shape, "bool", 1)
    x = T(a, device, dtype)
    xs = as_np(x)
    assert minitorch.nonzero(x).tolist() == np.argwhere(xs).tolist()
    assert tuple(minitorch.nonzero(x).shape) == np.argwhere(xs).shape
    assert minitorch.argwhere(x).tolist() == np.argwhere(xs).tolist()
    got = x.nonzero(as_tuple=True)
    expect = np.nonzero(np.atleast_1d(xs))
    assert [g.tolist() for g in got] == [e.tolist() for e in expect]
    assert_close(as_np(x.masked_select(T(m, device))), xs[m])
    fill = minitorch.tensor(1, device=device).to(x.dtype)
    assert_close(as_np(x.masked_fill(T(m, device), fill)), np.where(m, as_np(fill), xs))
    if len(shape) == 2:  # a mask that broadcasts, and a transposed input
        row = values(shape[1:], "bool", 2)
        assert_close(as_np(x.masked_select(T(row, device))), xs[:, row].ravel())
        xt = x.t()
        assert_close(as_np(xt.masked_select(T(m.T, device))), xs.T[m.T])
        assert minitorch.nonzero(xt).tolist() == np.argwhere(xs.T).tolist()


@pytest.mark.parametrize("dtype", DTYPES)
def test_cat_stack_against_numpy(device, dtype):
    parts = [values((2, k, 3), dtype, k) for k in (1, 0, 4, 2)]
    ts = [T(p, device, dtype) for p in parts]
    ref = [as_np(t) for t in ts]
    assert_close(as_np(minitorch.cat(ts, 1)), np.concatenate(ref, 1))
    assert_close(as_np(minitorch.cat(ts, -2)), np.concatenate(ref, 1))
    views = [t.transpose(0, 2) for t in ts]  # non-contiguous
    assert_close(as_np(minitorch.cat(views, 1)), np.concatenate([r.transpose(2, 1, 0) for r in ref], 1))
    same = [T(values((3, 2), dtype, k), device, dtype) for k in range(5)]
    for dim in (0, 1, 2, -1):
        assert_close(as_np(minitorch.stack(same, dim)), np.stack([as_np(s) for s in same], dim))
    mixed = minitorch.cat([T(np.ones((1, 2)), device, "float32"), T(np.ones((1, 2)), device, "int64")])
    assert mixed.dtype == minitorch.float32  # promoted, as PyTorch


INDEX_SELECT_CASES = [((5, 4), 0), ((5, 4), 1), ((5, 4), -1), ((2, 3, 4), 1), ((2, 3, 4), -3), ((1, 3, 4), 1),
                      ((3, 1, 2), 1), ((4,), 0), ((3, 0, 2), 0), ((3, 4, 2), 2)]


@pytest.mark.parametrize("dtype", DTYPES + ["int32", "uint8"])
@pytest.mark.parametrize("shape, dim", INDEX_SELECT_CASES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_index_select_against_numpy(device, dtype, shape, dim, layout):
    """Both kernels (rows of a contiguous tensor; any strides) against np.take, negative
    indices wrapped as NumPy's, repeated indices, int32 indices, size-0/1 dims."""
    rng = np.random.default_rng(len(shape) + dim)
    a = values(shape, "int64" if dtype in ("int32", "uint8") else dtype) % (256 if dtype == "uint8" else 1 << 40)
    x = T(a if layout == "contiguous" else a.T.copy(), device, dtype)
    if layout == "transposed":
        x = x.permute(*reversed(range(x.dim())))
    elif layout == "sliced":
        x = T(np.concatenate([a, a], -1), device, dtype)[..., ::2] if a.ndim else x
    xs = as_np(x)
    size = shape[dim]
    for idx in (rng.integers(-size, size, 7) if size else np.zeros(0, np.int64), np.array([size - 1] if size else []),
                np.array(max(size - 1, 0))):
        if size == 0 and idx.size:
            continue
        for index_dtype in ("int64", "int32"):
            i = T(idx.astype(np.int64), device, index_dtype)
            got = x.index_select(dim, i)
            assert got.dtype == x.dtype and got.is_contiguous()
            expect = np.take(xs, idx.reshape(-1), axis=dim)
            assert tuple(got.shape) == expect.shape
            assert_close(as_np(got), expect)


@pytest.mark.parametrize("shape, dim", INDEX_SELECT_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_index_select_backward_against_numpy(device, shape, dim, dtype):
    """The gradient: g rows added at the (repeated, negative) indices, through the row
    kernel (contiguous g) and the strided scatter (a transposed g)."""
    rng = np.random.default_rng(7 + dim)
    size = shape[dim]
    idx = rng.integers(-size, size, 9) if size else np.zeros(0, np.int64)
    x = T(values(shape, dtype), device, dtype, grad=True)
    out = x.index_select(dim, T(idx, device))
    gshape = tuple(out.shape)
    ga = values(gshape, dtype, 3)
    for g in (T(ga, device, dtype), T(ga.T.copy(), device, dtype).permute(*reversed(range(len(gshape))))):
        x.grad = None
        out.backward(g, retain_graph=True)
        expect = np.zeros(shape)
        np.add.at(np.moveaxis(expect, dim, 0), idx % size if size else idx, np.moveaxis(ga.astype(np.float64), dim, 0))
        assert_close(as_np(x.grad).astype(np.float64), expect, atol=1e-2 if dtype == "float16" else 1e-5)


def test_gather_backward_against_numpy(device):
    """gather's gradient (zero fill + one scatter-add kernel) with repeated indices and a
    non-contiguous input and gradient, against np.add.at."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((6, 5))
    idx = rng.integers(0, 6, (4, 5))  # gathers along dim 0 of x.t() (5, 6)... dim 1 of x
    x = T(a, device, "float64", grad=True)
    out = x.t().gather(1, T(idx.T.copy(), device))
    g = rng.standard_normal(idx.T.shape)
    out.backward(T(g.T.copy(), device).t())
    expect = np.zeros((5, 6))
    for p in np.ndindex(*idx.T.shape):
        expect[p[0], idx.T[p]] += g[p]
    assert_close(as_np(x.grad), expect.T)


def test_index_select_errors(device):
    x = minitorch.randn(3, 4, device=device)
    for dim, bad in ((0, [0, 7]), (1, [-9]), (-1, [9])):
        with pytest.raises(IndexError, match="index_select: index -?[79] is out of bounds for dimension with size"):
            x.index_select(dim, minitorch.tensor(bad, device=device)).cpu()  # a GPU says so at the next sync
        with pytest.raises(IndexError, match="index_select"):
            x.t().index_select(dim, minitorch.tensor(bad, device=device)).cpu()
    x.requires_grad_()
    out = x.index_select(0, minitorch.tensor([1, 2], device=device))
    assert out.grad_fn.name() == "IndexSelectBackward0"
    with pytest.raises(TypeError, match="index must be an int64 or int32 tensor"):
        x.index_select(0, minitorch.tensor([1.0], device=device))


@pytest.mark.parametrize("simple", [False, True])
@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (7, 1001), (4200, 1001)])
def test_gather_and_index_select_every_element_of_each_thread(monkeypatch, device, shape, simple):
    """The GPU gathers take four elements a thread (cuda/indexing.cu: kGatherUnroll) and walk
    the grid in steps: counts that leave a thread 1-3 elements, and (4200 x 1001) more than one
    grid step of 4096 blocks x 256 threads x 4; float32 and 2-byte elements. The same through
    the readable one-element kernels (MINITORCH_CUDA_GATHER=simple)."""
    if simple:
        if device == "cpu":
            pytest.skip("MINITORCH_CUDA_GATHER picks between CUDA kernels")
        monkeypatch.setenv("MINITORCH_CUDA_GATHER", "simple")
    rng = np.random.default_rng(len(shape) + shape[-1])
    x = rng.standard_normal(shape).astype(np.float32)
    idx = rng.integers(0, shape[-1], size=shape)
    rows = rng.integers(0, shape[0], size=shape[0] + 3)
    for dtype in ("float32", "float16"):
        xt = T(x, device, dtype)
        want = x.astype(np.float16).astype(np.float32) if dtype == "float16" else x
        np.testing.assert_array_equal(as_np(xt.gather(1, T(idx, device))), np.take_along_axis(want, idx, 1))
        np.testing.assert_array_equal(as_np(xt.index_select(0, T(rows, device))), want[rows])
        np.testing.assert_array_equal(as_np(xt.index_select(1, T(idx[0], device))), want[:, idx[0]])


@needs_cuda
@pytest.mark.parametrize("simple", [False, True])
def test_gathers_run_the_phased_kernels_unless_asked(monkeypatch, simple):
    """gather and index_select (inner dims: gather_phased_kernel, dim 0 and embedding:
    gather_rows_phased_kernel), one launch each; MINITORCH_CUDA_GATHER=simple asks for the
    readable one-element-a-thread kernels."""
    if simple:
        monkeypatch.setenv("MINITORCH_CUDA_GATHER", "simple")
    x = minitorch.randn(6, 5, device="cuda")
    i = minitorch.tensor([[0, 4], [1, 1], [2, 3], [4, 0], [3, 3], [0, 0]], device="cuda")
    rows = minitorch.tensor([5, 0, 2], device="cuda")
    emb = minitorch.nn.Embedding(6, 5).to("cuda")
    suffix = "" if simple else "_phased"
    for fn, kernel in ((lambda: x.gather(1, i), f"gather{suffix}_kernel"),
                       (lambda: x.index_select(1, rows[1:]), f"gather{suffix}_kernel"),
                       (lambda: x.index_select(0, rows), f"gather_rows{suffix}_kernel"),
                       (lambda: emb(rows), f"gather_rows{suffix}_kernel")):
        assert [k.split("<")[0] for k in launches(fn)] == [kernel]


@pytest.mark.parametrize("at", [0, 1, 2, 3, 4, 9])
def test_a_bad_index_in_any_place_of_a_thread(device, at):
    """A bad index at each of the places a thread takes (the four of a GPU thread, and the next
    step's): an IndexError naming the value, and the next gather is right again."""
    x = minitorch.randn(2, 5, device=device)
    idx = np.zeros((2, 5), np.int64)
    idx.flat[at] = 7
    with pytest.raises(IndexError, match="gather: index 7 is out of bounds for dimension 1 with size 5"):
        x.gather(1, T(idx, device)).tolist()
    rows = np.zeros(at + 1, np.int64)
    rows[at] = -3
    with pytest.raises(IndexError, match="index_select: index -3 is out of bounds for dimension with size 2"):
        x.index_select(0, T(rows, device)).tolist()
    assert x.gather(1, T(np.ones((2, 5), np.int64), device)).tolist() == [[v[1]] * 5 for v in x.tolist()]


# ------------------------------------------------------------------ gradients ----

def test_gradcheck(device):
    rng = np.random.default_rng(0)
    x = T(rng.standard_normal((4, 5)), device, grad=True)
    idx = T(rng.integers(0, 5, (4, 3)), device)
    uidx = T(unique_rows(rng, 5, (4, 3), 1), device)
    s = T(rng.standard_normal((4, 3)), device, grad=True)
    big = T(rng.standard_normal((5, 4)), device, grad=True)  # larger than index: its corner counts
    i1 = T(np.array([3, 0, -2]), device)  # distinct rows (-2 is row 2)
    rows = T(rng.standard_normal((3, 5)), device, grad=True)
    v = T(np.array(0.5), device, grad=True)
    m = T(rng.random((4, 5)) > 0.5, device)
    assert gradcheck(lambda t: t.gather(1, idx), (x,))
    assert gradcheck(lambda t: t.t().gather(0, idx.t()), (x,))
    assert gradcheck(lambda t: t.index_select(1, T(np.array([4, -1, 0, 2]), device)), (x,))
    assert gradcheck(lambda t: t.t().index_select(0, T(np.array([4, -1, 0, 2]), device)), (x,))
    assert gradcheck(lambda t: t.index_select(0, T(np.array([3, 3, -4]), device)), (x,))
    assert gradcheck(lambda t, u: t.scatter(1, uidx, u), (x, s))
    assert gradcheck(lambda t, u: t.scatter(1, uidx, u), (x, big))
    assert gradcheck(lambda t: t.scatter(1, uidx, 2.0), (x,))
    assert gradcheck(lambda t, u: t.scatter_add(1, idx, u), (x, s))
    assert gradcheck(lambda t, u: t.index_add(0, i1, u, alpha=-2), (x, rows))
    assert gradcheck(lambda t, u: t.index_copy(0, i1, u), (x, rows))
    assert gradcheck(lambda t, u: t.index_fill(1, T(np.array([0, 2]), device), u), (x, v))
    assert gradcheck(lambda t, u: t.index_put((i1,), u), (x, rows))
    assert gradcheck(lambda t, u: t.index_put((i1, T(np.array([1]), device)), u, accumulate=True), (x, v))
    assert gradcheck(lambda t, u: t.masked_fill(m, u), (x, v))
    assert gradcheck(lambda t: t.masked_select(m), (x,))
    assert gradcheck(lambda t: t.masked_select(m[0]), (x,))  # broadcast mask
    assert gradcheck(lambda t, u: minitorch.cat([t, u.t(), t[:0]], 0), (x, big))
    assert gradcheck(lambda t, u: minitorch.stack([t, u, t], 1), (x, big.t()))


def test_backward_node_names(device):
    x = minitorch.randn(3, 4, device=device, requires_grad=True)
    idx = minitorch.tensor([[0], [1], [2]], device=device)
    assert x.gather(1, idx).grad_fn.name() == "GatherBackward0"
    assert x.scatter_add(1, idx, x[:, :1]).grad_fn.name() == "ScatterAddBackward0"
    assert x.masked_select(x > 0).grad_fn.name() == "MaskedSelectBackward0"
    assert minitorch.stack([x, x]).grad_fn.name() == "StackBackward0"
    assert x.index_fill(0, idx[0], 1.0).grad_fn.name() == "IndexFillBackward0"


# --------------------------------------------------------------------- errors ----

def test_errors(device):
    x = minitorch.randn(3, 4, device=device)
    good = minitorch.tensor([[0], [1], [2]], device=device)
    bad = minitorch.tensor([[0], [4], [1]], device=device)
    for fn in (lambda: x.gather(1, bad), lambda: x.scatter_add(1, bad, x[:, :1]), lambda: x.scatter(1, bad, 1.0),
               lambda: x.index_add(0, bad[:, 0] - 1, x), lambda: x.index_put((bad[:, 0],), x[0]),
               lambda: x.index_fill(1, minitorch.tensor([-5], device=device), 0.0)):
        with pytest.raises(IndexError, match="out of bounds for dimension"):  # a GPU says so at the next sync
            fn().tolist()
    with pytest.raises(IndexError, match="gather: index 4 is out of bounds for dimension 1 with size 4"):
        x.gather(1, bad).tolist()
    with pytest.raises(TypeError, match="int64"):
        x.gather(1, good.float())
    with pytest.raises(TypeError, match="same dtype"):
        x.scatter(1, good, x[:, :1].double())
    with pytest.raises(ValueError, match="same number of dimensions"):
        x.gather(1, good[:, 0])
    with pytest.raises(ValueError, match="must not exceed"):
        x.gather(1, minitorch.zeros(4, 1, dtype=minitorch.int64, device=device))
    with pytest.raises(IndexError):
        x.gather(2, good)
    with pytest.raises(TypeError, match="bool mask"):
        x.masked_fill(good.expand(3, 4), 0.0)
    with pytest.raises(TypeError, match="bool mask"):
        x.masked_select(x)
    with pytest.raises(ValueError, match="0-dimensional"):
        x.masked_fill(x > 0, x[0])
    with pytest.raises((ValueError, RuntimeError)):
        x.masked_select(minitorch.ones(2, dtype=minitorch.bool, device=device))
    with pytest.raises(ValueError, match="shape mismatch"):
        x.index_put((good[:, 0],), minitorch.ones(3, 3, device=device))
    with pytest.raises(IndexError, match="mask"):
        x.index_put((minitorch.ones(2, dtype=minitorch.bool, device=device),), 0.0)
    with pytest.raises(ValueError, match="cat: sizes of tensors must match"):
        minitorch.cat([x, minitorch.zeros(2, 3, device=device)])
    with pytest.raises(ValueError, match="stack: expects each tensor to be equal size"):
        minitorch.stack([x, x.t()])
    with pytest.raises(IndexError):
        minitorch.stack([x, x], 3)
