"""NumPy's advanced indexing as one kernel: ``x[i, j]``, ``x[:, i]``, ``x[mask]`` and their
writes ``x[i, j] = v`` go to ``_C._index`` / ``_C._index_put_`` (ops/indexing.cpp), which
read the index tensors where they lie (strided, broadcast) and check them in the kernel.

Checked against NumPy on every device, on non-contiguous tensors and indices, every
dtype kind, size-0 and size-1 dims; float64 gradcheck of the reads and of the writes
inside a graph; and, in the emulated build, the structure: one launch, no copy, no
host synchronization for int indices.
"""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch.profiler import ProfilerActivity, profile
from minitorch.testing import assert_close, gradcheck
from conftest import CUDA_SKIP_REASON


def arr(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def T(a, device, grad=False):
    return minitorch.tensor(a, device=device, requires_grad=grad)


# (numpy index builder) -> the same index for minitorch; indices chosen in range for (4, 5, 6).
CASES = {
    "pick": lambda: (np.array([0, 3, 1, 3]), np.array([4, 0, 2, 4])),
    "negative": lambda: (np.array([-1, -4, 2]), np.array([-5, 4, -1])),
    "cols": lambda: (slice(None), np.array([4, 0, 0, -2])),
    "apart": lambda: (np.array([1, 3]), slice(None), np.array([5, 0])),
    "outer": lambda: (np.array([[0], [2], [3]]), np.array([1, 4])),
    "scalar and tensor": lambda: (2, slice(None), np.array([1, 5, 5])),
    "middle": lambda: (slice(1, 3), np.array([[0, 1], [2, 3]])),
    "2-D index": lambda: (np.array([[0, 1, 2], [3, 2, 1]]),),
    "empty": lambda: (np.zeros(0, np.int64), np.zeros(0, np.int64)),
    "mask": lambda: (np.arange(20).reshape(4, 5) % 3 == 0,),
    "mask then slice": lambda: (np.array([True, False, True, True]), slice(1, 4)),
    "None": lambda: (None, np.array([3, 0])),
}


def mt_index(idx, device):
    return tuple(T(i, device) if isinstance(i, np.ndarray) else i for i in idx)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_getitem_matches_numpy(device, case, layout):
    base = arr((6, 5, 8))
    a = {"contiguous": base[:4, :, :6], "transposed": base.transpose(2, 1, 0)[:4, :, :6],
         "sliced": base[1:5, :, ::1][:, :, 1:7]}[layout]
    x = {"contiguous": T(base, device)[:4, :, :6], "transposed": T(base, device).permute(2, 1, 0)[:4, :, :6],
         "sliced": T(base, device)[1:5][:, :, 1:7]}[layout]
    idx = CASES[case]()
    assert_close(x[mt_index(idx, device)], a[idx])


@pytest.mark.parametrize("case", list(CASES))
def test_setitem_matches_numpy(device, case):
    idx = CASES[case]()
    a = arr((4, 5, 6))
    x = T(a, device)
    shape = a[idx].shape
    # Where an index names one place twice, NumPy keeps the last write and a GPU any one
    # (as PyTorch's): the values are read from one array at the places, so that every
    # write to a place is the same value, whichever wins.
    v = arr((4, 5, 6), 1)[idx]
    a[idx] = v
    x[mt_index(idx, device)] = T(v, device)
    assert_close(x, a)
    a[idx] = 2.5  # a number, broadcast
    x[mt_index(idx, device)] = 2.5
    assert_close(x, a)
    if shape and shape[-1]:  # a row broadcast over the index positions
        row = arr(shape[-1:], 2)
        a[idx] = row
        x[mt_index(idx, device)] = T(row, device)
        assert_close(x, a)


def test_setitem_writes_through_views_and_strided_targets(device):
    a = arr((5, 6))
    x = T(a, device)
    xt = x.t()  # (6, 5), not contiguous: written where it lies
    xt[T(np.array([0, 5]), device), T(np.array([4, 1]), device)] = T(np.array([7.0, 8.0]), device)
    a.T[[0, 5], [4, 1]] = [7.0, 8.0]
    assert_close(x, a)
    rows = x[1:4]  # a view: the write reaches the base
    rows[T(np.array([2, 0]), device), 3] = -1.0
    a[1:4][[2, 0], 3] = -1.0
    assert_close(x, a)


def test_index_tensors_are_read_where_they_lie(device):
    a = arr((5, 6))
    x = T(a, device)
    i = T(np.array([4, 0, 1, 2, 3, 3, 1, 0]), device)[::2]  # every other value: a strided index
    j = T(np.array([[5, 2], [0, 1]]), device).t()[0]           # a column: strided too
    assert_close(x[i[:2], j], a[[4, 1], [5, 0]])
    assert_close(x[i, 2], a[[4, 1, 3, 1], 2])
    k = minitorch.tensor(3, device=device).expand(4)           # stride 0
    assert_close(x[i, k], a[[4, 1, 3, 1], 3])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "int32", "int64", "bool"])
def test_every_dtype(device, dtype):
    dt = getattr(minitorch, dtype)
    a = np.arange(30).reshape(5, 6) % 7
    x = minitorch.tensor(a, device=device).to(dt)
    got = x[T(np.array([4, 0, 4]), device), T(np.array([1, 5, 1]), device)]
    if dt is minitorch.bool:
        a = a.astype(bool)
    assert got.dtype == dt
    assert got.cpu().to(minitorch.int64).tolist() == a[[4, 0, 4], [1, 5, 1]].astype(np.int64).tolist()
    x[T(np.array([1, 2]), device), T(np.array([0, 0]), device)] = 1
    a[[1, 2], [0, 0]] = 1
    assert x.cpu().to(minitorch.int64).tolist() == a.astype(np.int64).tolist()


def test_accumulate_adds_repeated_places(device):
    for dt in (minitorch.float64, minitorch.float16, minitorch.int64):
        acc = minitorch.zeros(3, 4, device=device, dtype=dt)
        i = T(np.array([2, 2, 0, 2]), device)
        acc.index_put_((i, T(np.array([1, 1, 3, 1]), device)), minitorch.ones(4, device=device, dtype=dt),
                       accumulate=True)
        want = np.zeros((3, 4))
        np.add.at(want, ([2, 2, 0, 2], [1, 1, 3, 1]), 1.0)
        assert acc.cpu().to(minitorch.float64).tolist() == want.tolist()


def test_a_0_dim_value_from_another_device_is_a_number(device):
    x = minitorch.zeros(4, device=device)
    x[T(np.array([0, 2]), device)] = minitorch.tensor(3.0)  # on the CPU
    assert x.tolist() == [3.0, 0.0, 3.0, 0.0]
    if device != "cpu":  # more than one value must be on x's device, as PyTorch's index_put_ says
        with pytest.raises(RuntimeError, match="same device"):
            x[T(np.array([0, 2]), device)] = minitorch.tensor([1.0, 2.0])


def test_value_that_aliases_the_target(device):
    a = arr((4, 3))
    x = T(a, device)
    x[T(np.array([3, 2, 1, 0]), device)] = x  # reads every row before any is written
    assert_close(x, a[::-1])


def test_index_put_with_none_is_a_whole_dim(device):
    a = arr((3, 4))
    x = T(a, device)
    out = x.index_put((None, T(np.array([0, 2]), device)), T(np.array(5.0), device))
    want = a.copy()
    want[:, [0, 2]] = 5.0
    assert_close(out, want)
    assert_close(x, a)  # out of place
    with pytest.raises(TypeError, match="indices must be Tensors or None"):
        x.index_put((slice(None), T(np.array([0]), device)), T(np.array(5.0), device))


def test_gradients(device):
    x = T(arr((4, 5)), device, True)
    i, j = T(np.array([3, 0, 3]), device), T(np.array([-1, 2, 4]), device)
    assert gradcheck(lambda t: t[i, j], (x,))                       # a place read twice: gradients add
    assert gradcheck(lambda t: t.t()[j, 1:3], (x,))
    assert gradcheck(lambda t: t[i[:, None], j[:2]], (x,))
    v = T(arr((2,), 3), device, True)

    def write(t, v):
        t = t * 1.0
        t[T(np.array([1, 3]), device), T(np.array([0, 4]), device)] = v
        return t
    assert gradcheck(write, (x, v))


def test_double_backward(device):
    x = T(arr((3, 4)), device, True)
    i = T(np.array([2, 0, 2]), device)
    y = (x[i, 1:] ** 2).sum()
    (gx,) = minitorch.autograd.grad(y, (x,), create_graph=True)
    (ggx,) = minitorch.autograd.grad(gx.sum(), (x,))
    counts = np.zeros((3, 4))
    np.add.at(counts, ([2, 0, 2], slice(1, None)), 1.0)
    assert_close(ggx, 2 * counts)


def test_bad_indices_raise(device):
    x = minitorch.zeros(3, 4, device=device)
    with pytest.raises(IndexError, match=r"index 4 is out of bounds for dimension 1 with size 4"):
        x[T(np.array([0, 1]), device), T(np.array([3, 4]), device)].cpu()  # a GPU reports at a sync
    with pytest.raises(IndexError, match=r"index -4 is out of bounds for dimension 0 with size 3"):
        x[T(np.array([-4]), device), T(np.array([0]), device)] = 1.0
        x.cpu()
    x.cpu()  # reported once: the tensor and the process stay usable
    with pytest.raises(RuntimeError, match=r"shape mismatch: value tensor of shape \(3,\) cannot be broadcast"):
        x[T(np.array([0, 1]), device), T(np.array([0, 1]), device)] = T(np.zeros(3), device)
    with pytest.raises(IndexError, match="tensors used as indices must be long"):
        x[T(np.array([0.5]), device), T(np.array([0]), device)]
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        minitorch.zeros(3, device=device).expand(2, 3)[T(np.array([0]), device), T(np.array([1]), device)] = 1.0
    with pytest.raises(RuntimeError, match="shape mismatch|broadcast"):
        x[T(np.array([0, 1]), device), T(np.array([0, 1, 2]), device)]


# ---- structure, counted by the profiler (the same on a GPU and in the emulator) -------

def launches(fn):
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
    return [k.name.split("<")[0] for e in prof.events() for k in e.kernels]


@pytest.fixture
def cuda():
    return "cuda"


# The marker (not a skip inside the fixture): .ci/run's emulated suites select tests by
# -k "cuda or devices", which the conftest makes match a skipif that names CUDA.
needs_cuda = pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)


@needs_cuda
def test_picking_is_one_launch_and_no_copy(cuda):
    logits = minitorch.randn(64, 10, device=cuda, requires_grad=True)
    y = minitorch.randint(0, 10, (64,), device=cuda)
    rows = minitorch.arange(64, device=cuda)
    assert launches(lambda: logits[rows, y]) == ["index_put_kernel"]  # no bounds check on the host
    assert launches(lambda: logits[:, y[:5]]) == ["index_put_kernel"]  # the dim moved by a view
    picked = logits[rows, y]
    ks = launches(lambda: picked.backward(minitorch.ones(64, device=cuda)))
    assert ks.count("index_put_kernel") == 1 and "copy_kernel" not in ks, ks  # a zero fill + one kernel


@needs_cuda
def test_writing_is_one_launch(cuda):
    x = minitorch.zeros(64, 10, device=cuda)
    y = minitorch.randint(0, 10, (64,), device=cuda)
    rows = minitorch.arange(64, device=cuda)
    assert launches(lambda: x.__setitem__((rows, y), 1.0)) == ["index_put_kernel"]
    v = minitorch.ones(64, device=cuda)
    assert launches(lambda: x.__setitem__((rows, y), v)) == ["index_put_kernel"]


@needs_cuda
def test_a_mask_is_nonzero_and_one_launch(cuda):
    x = minitorch.randn(64, 10, device=cuda)
    m = x > 0
    ks = launches(lambda: x[m])
    assert ks.count("index_put_kernel") == 1 and "copy_kernel" not in ks, ks


@needs_cuda
def test_index_put_in_place_is_one_launch(cuda):
    acc = minitorch.zeros(10, 4, device=cuda)
    i = minitorch.randint(0, 10, (32,), device=cuda)
    v = minitorch.randn(32, 4, device=cuda)
    assert launches(lambda: acc.index_put_((i,), v, accumulate=True)) == ["index_put_kernel"]  # no copy of acc
    cols = i[:3] % 4
    assert launches(lambda: acc.index_put_((None, cols), 1.0)) == ["index_put_kernel"]


def test_index_put_in_place_follows_the_in_place_rules(device):
    a = arr((3, 4))
    x = T(a, device)
    assert x.index_put_((None, T(np.array([3, 1]), device)), T(np.array(0.5), device)) is x
    a[:, [3, 1]] = 0.5
    assert_close(x, a)
    leaf = T(a, device, True)
    with pytest.raises(RuntimeError, match="leaf"):
        leaf.index_put_((T(np.array([0]), device),), T(np.array(1.0), device))
    h = leaf * 1.0  # inside a graph: recorded, and its gradient passes the unwritten places
    h.index_put_((T(np.array([1]), device), T(np.array([2]), device)), T(np.array(7.0), device))
    h.sum().backward()
    want = np.ones((3, 4))
    want[1, 2] = 0.0
    assert_close(leaf.grad, want)
