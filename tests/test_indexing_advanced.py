"""gather / scatter / scatter_add / index_add / index_copy / index_fill, nonzero /
masked_select, and NumPy's advanced indexing (boolean masks, several index tensors,
get and set, index_put_) against NumPy on every device, with float64 gradcheck."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch.testing import assert_close, gradcheck
from conftest import TORCH_SKIP_REASON


def arr(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def T(a, device, grad=False):
    return minitorch.tensor(a, device=device, requires_grad=grad)


def np_gather(a, dim, idx):
    return np.take_along_axis(a, idx, dim) if idx.shape == a.shape else \
        np.array([a[tuple(idx[p] if d == dim else p[d] for d in range(a.ndim))] for p in np.ndindex(*idx.shape)]
                 ).reshape(idx.shape)


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_gather(device, dim):
    a = arr((3, 4, 5))
    rng = np.random.default_rng(1)
    shape = [2, 3, 4]
    idx = rng.integers(0, a.shape[dim], size=shape)
    out = minitorch.gather(T(a, device), dim, T(idx, device))
    assert_close(out, np_gather(a, dim % 3, idx))
    assert_close(T(a, device).permute(2, 0, 1).gather(0, T(idx[:, :, :3], device)),
                 np_gather(a.transpose(2, 0, 1), 0, idx[:, :, :3]))


def test_gather_errors_and_grad(device):
    x = T(arr((3, 4)), device, True)
    idx = T(np.array([[0, 3], [2, 2], [1, 0]]), device)
    assert gradcheck(lambda t: t.gather(1, idx), (x,))
    with pytest.raises(IndexError, match="out of bounds"):  # a GPU reports at the next sync
        x.gather(1, T(np.array([[4]]), device)).tolist()
    with pytest.raises(IndexError, match="out of bounds"):
        x.gather(1, T(np.array([[-1]]), device)).tolist()
    with pytest.raises(TypeError, match="int64"):
        x.gather(1, T(np.array([[1.0]]), device))
    with pytest.raises(ValueError, match="same number of dimensions"):
        x.gather(1, T(np.array([1]), device))


def test_scatter_and_scatter_add(device):
    a = np.zeros((3, 5))
    idx = np.array([[0, 1, 2], [4, 3, 2], [1, 1, 0]])
    src = arr((3, 3))
    expect_add = a.copy()
    expect_set = a.copy()
    for i in range(3):
        for j in range(3):
            expect_add[i, idx[i, j]] += src[i, j]
    for i in range(3):
        for j in range(3):
            expect_set[i, idx[i, j]] = src[i, j]  # last one wins on the CPU
    out = T(a, device).scatter_add(1, T(idx, device), T(src, device))
    assert_close(out, expect_add)
    got = T(a, device).scatter(1, T(idx, device), T(src, device))
    no_dup = np.array([True, True, False])  # row 2 names position 1 twice: any one may win on a GPU
    assert_close(got[T(no_dup, device)], expect_set[no_dup])
    one_hot = minitorch.zeros(3, 4, device=device).scatter_(1, T(np.array([[1], [3], [0]]), device), 1.0)
    assert one_hot.tolist() == np.eye(4)[[1, 3, 0]].tolist()
    x = T(arr((3, 5)), device, True)
    s = T(src, device, True)
    assert gradcheck(lambda t, u: t.scatter_add(1, T(idx, device), u), (x, s))
    s2 = T(arr((2, 5), 4), device, True)
    assert gradcheck(lambda t, u: t.scatter(0, T(np.array([[0, 1, 2, 1, 2]]), device), u), (x, s2))


def test_index_add_copy_fill(device):
    a, src = arr((5, 3)), arr((3, 3), 1)
    idx = np.array([4, 0, 4])
    expect = a.copy()
    np.add.at(expect, idx, 2.0 * src)
    assert_close(T(a, device).index_add(0, T(idx, device), T(src, device), alpha=2.0), expect)
    idx2 = np.array([4, 0, 2])
    expect = a.copy()
    expect[idx2] = src
    assert_close(minitorch.index_copy(T(a, device), 0, T(idx2, device), T(src, device)), expect)
    expect = a.copy()
    expect[:, [0, 2]] = -1
    assert_close(T(a, device).index_fill(1, T(np.array([0, 2]), device), -1.0), expect)
    y = T(a, device)
    y.index_add_(1, T(np.array([1]), device), T(np.ones((5, 1)), device))
    assert_close(y, a + np.array([0, 1, 0]))
    x, s = T(a, device, True), T(src, device, True)
    assert gradcheck(lambda t, u: t.index_add(0, T(idx, device), u, alpha=0.5), (x, s))
    assert gradcheck(lambda t, u: t.index_copy(0, T(idx2, device), u), (x, s))
    with pytest.raises(ValueError, match="index_add"):
        T(a, device).index_add(0, T(idx, device), T(arr((2, 3)), device))
    with pytest.raises(IndexError):
        T(a, device).index_copy(0, T(np.array([5, 0, 1]), device), T(src, device)).tolist()  # a GPU reports at a sync


def test_nonzero_masked_select(device):
    a = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    x = T(a, device)
    assert minitorch.nonzero(x).tolist() == np.argwhere(a).tolist()
    rows, cols = x.nonzero(as_tuple=True)
    assert rows.tolist() == [0, 1, 1] and cols.tolist() == [1, 0, 2]
    assert x.nonzero().device == x.device
    m = T(a > 0, device)
    assert_close(minitorch.masked_select(x, m), a[a > 0])
    assert_close(x.masked_select(T(np.array([True, False, True]), device)), a[:, [0, 2]].ravel())


@pytest.mark.parametrize("index", [
    lambda m: (m,),
    lambda m: (slice(None), [0, 2]),
    lambda m: ([0, 1], slice(None), [1, 3]),
    lambda m: ([[0], [1]], [2, 0]),
    lambda m: (Ellipsis, [3, 0]),
    lambda m: (0, [2, 1], slice(1, 3)),
    lambda m: (m[:, :, 0],),
    lambda m: (None, [1, 0]),
])
def test_advanced_getitem(device, index):
    a = arr((2, 3, 4))
    mask = a > 0
    idx = index(mask)
    x = T(a, device)
    mt_idx = tuple(T(i, device) if isinstance(i, np.ndarray) else i for i in idx)
    assert_close(x[mt_idx if len(mt_idx) > 1 else mt_idx[0]], a[idx if len(idx) > 1 else idx[0]])


def test_advanced_getitem_grad(device):
    x = T(arr((3, 4)), device, True)
    m = T(arr((3, 4), 2) > 0, device)
    assert gradcheck(lambda t: t[m], (x,))
    assert gradcheck(lambda t: t[[0, 2, 0], [1, 1, 3]], (x,))
    assert gradcheck(lambda t: t[:, [3, 0]], (x,))


def test_advanced_setitem(device):
    a = arr((3, 4))
    b = a.copy()
    b[a > 0] = 0.0
    x = T(a, device)
    x[T(a > 0, device)] = 0.0
    assert_close(x, b)
    b[[0, 2], [1, 3]] = np.array([7.0, 8.0])
    x[[0, 2], [1, 3]] = T(np.array([7.0, 8.0]), device)
    assert_close(x, b)
    b[:, [0, 1]] = 5.0
    x[:, [0, 1]] = 5.0
    assert_close(x, b)
    view = x[1:]
    view[T(np.array([True, False]), device)] = -3.0    # writes reach the base tensor
    b[1] = -3.0
    assert_close(x, b)
    with pytest.raises(IndexError, match="out of bounds"):
        x[[0, 5]] = 1.0
        x.cpu()  # a GPU's kernel reports at the next synchronization
    with pytest.raises(IndexError, match="mask"):
        x[T(np.array([True, False]), device)] = 1.0
    acc = minitorch.zeros(4, device=device, dtype=minitorch.float64)
    acc.index_put_((T(np.array([1, 1, 3]), device),), T(np.array([1.0, 2.0, 3.0]), device), accumulate=True)
    assert acc.tolist() == [0.0, 3.0, 0.0, 3.0]


def test_against_torch_when_installed(device):
    torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)
    a = arr((3, 4, 5))
    idx = np.random.default_rng(3).integers(0, 4, size=(3, 2, 5))
    assert_close(T(a, device).gather(1, T(idx, device)), torch.tensor(a).gather(1, torch.tensor(idx)).numpy())
    m = a > 0.3
    assert_close(T(a, device)[T(m, device)], torch.tensor(a)[torch.tensor(m)].numpy())
    assert_close(T(a, device)[[0, 2], :, [1, 4]], torch.tensor(a)[[0, 2], :, [1, 4]].numpy())
