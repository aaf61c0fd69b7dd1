"""Zero-copy exchange: DLPack both ways (NumPy, PyTorch where installed), as_tensor, and
``__cuda_array_interface__``. Memory is shared: a write on one side shows on the other."""
from __future__ import annotations

import ctypes
import gc

import numpy as np
import pytest

import minitorch
from conftest import DEVICES, TORCH_SKIP_REASON

DTYPES = [np.float32, np.float64, np.int64, np.bool_]

try:
    import torch
except ImportError:
    torch = None


def capsule_name(capsule) -> str:
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    return get_name(capsule).decode()


def sample(dtype, shape=(3, 4), seed=0):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    return (rng.standard_normal(shape) * 10).astype(dtype)


# ------------------------------------------------------------ NumPy -> minitorch ----

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_from_dlpack_shares_numpy_memory(dtype):
    a = sample(dtype)
    t = minitorch.from_dlpack(a)
    assert t.shape == a.shape and t.dtype == getattr(minitorch, np.dtype(dtype).name)
    assert t.data_ptr() == a.ctypes.data
    np.testing.assert_array_equal(t.numpy(), a)
    a[1, 2] = a[0, 0] if dtype != np.bool_ else not a[1, 2]
    assert t[1, 2].item() == a[1, 2]


@pytest.mark.parametrize("view", ["transposed", "stepped", "offset", "zero-size", "zero-dim", "size-1"])
def test_from_dlpack_keeps_strides_and_offsets(view):
    base = np.arange(60, dtype=np.float64).reshape(6, 10)
    a = {"transposed": base.T, "stepped": base[::2, 1::3], "offset": base[2:, 3:],
         "zero-size": base[:0], "zero-dim": np.array(5.0), "size-1": base[3:4, :1]}[view]
    t = minitorch.from_dlpack(a)
    assert t.shape == a.shape
    np.testing.assert_array_equal(t.numpy(), a)
    if a.size:
        assert t.data_ptr() == a.ctypes.data  # the view's first element, not a copy


def test_from_dlpack_keeps_the_producer_alive():
    t = minitorch.from_dlpack(np.arange(100_000, dtype=np.float64))
    gc.collect()
    assert t.sum().item() == sum(range(100_000))


def test_from_dlpack_refuses_what_minitorch_cannot_hold():
    with pytest.raises(TypeError, match="from_dlpack: minitorch has no dtype for DLPack uint16"):
        minitorch.from_dlpack(np.arange(3, dtype=np.uint16))
    with pytest.raises(ValueError, match="negative strides"):
        minitorch.from_dlpack(np.arange(4.0)[::-1])
    with pytest.raises(TypeError, match="__dlpack__ or a DLPack capsule, got list"):
        minitorch.from_dlpack([1, 2])


# ------------------------------------------------------------ minitorch -> NumPy ----

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_numpy_reads_minitorch_memory(dtype):
    t = minitorch.tensor(sample(dtype, seed=1))
    a = np.from_dlpack(t)
    assert a.dtype == dtype and a.ctypes.data == t.data_ptr()
    np.testing.assert_array_equal(a, t.numpy())
    a[0, 1] = a[2, 3]
    assert t[0, 1].item() == a[2, 3]


def test_numpy_reads_views_of_minitorch_tensors():
    t = minitorch.arange(24, dtype=minitorch.float32).reshape(4, 6)
    for view in (t.t(), t[1:, 2:], t[:, ::2], t[2], t[0, 0], t[:0]):
        np.testing.assert_array_equal(np.from_dlpack(view), view.numpy())


@pytest.mark.parametrize("device", DEVICES)
def test_dlpack_device(device):
    t = minitorch.ones(3, device=device)
    expected = (2, 0) if device == "cuda" and not minitorch.cuda.is_emulated() else (1, 0)
    assert t.__dlpack_device__() == expected
    if expected == (1, 0):  # host memory, also for the emulator's "cuda" tensors
        np.testing.assert_array_equal(np.from_dlpack(t), [1.0, 1.0, 1.0])


def test_export_refuses_tensors_that_require_grad():
    w = minitorch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad; use tensor.detach"):
        w.__dlpack__()
    np.testing.assert_array_equal(np.from_dlpack(w.detach()), [1.0, 1.0])


def test_dlpack_keywords():
    t = minitorch.arange(3, dtype=minitorch.float64)
    assert capsule_name(t.__dlpack__()) == "dltensor"
    versioned = t.__dlpack__(max_version=(1, 0))
    assert capsule_name(versioned) == "dltensor_versioned"
    back = minitorch.from_dlpack(versioned)
    assert back.data_ptr() == t.data_ptr() and capsule_name(versioned) == "used_dltensor_versioned"
    copied = minitorch.from_dlpack(t.__dlpack__(copy=True))
    assert copied.data_ptr() != t.data_ptr() and copied.tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(BufferError, match="exporting to device"):
        t.__dlpack__(dl_device=(2, 0))


def test_capsules_are_consumed_once_and_freed_when_unused():
    minitorch.cpu.empty_cache()
    before = minitorch.cpu.memory_allocated()
    t = minitorch.zeros(1 << 16)
    cap = minitorch.utils.dlpack.to_dlpack(t)
    del t
    gc.collect()
    assert minitorch.cpu.memory_allocated() > before  # the capsule holds the memory
    del cap
    gc.collect()
    assert minitorch.cpu.memory_allocated() == before  # an unconsumed capsule frees it

    cap = minitorch.utils.dlpack.to_dlpack(minitorch.arange(3))
    assert minitorch.utils.dlpack.from_dlpack(cap).tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="got 'used_dltensor'.*consumed only once"):
        minitorch.from_dlpack(cap)


# ------------------------------------------------------------------ PyTorch ----

@pytest.mark.skipif(torch is None, reason=TORCH_SKIP_REASON)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_pytorch_round_trip_shares_memory(dtype):
    t = torch.arange(12).reshape(3, 4).to(getattr(torch, dtype))
    m = minitorch.from_dlpack(t)
    t[1, 1] = 42
    assert m[1, 1].item() == 42
    back = torch.from_dlpack(m.t())
    assert back.stride() == (1, 4) and back.data_ptr() == t.data_ptr()


# ---------------------------------------------------------------- as_tensor ----

def test_as_tensor_shares_or_copies_like_pytorch():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = minitorch.as_tensor(a)
    assert t.data_ptr() == a.ctypes.data  # same dtype and device: shared
    assert minitorch.as_tensor(t) is t
    c = minitorch.as_tensor(a, dtype=minitorch.float64)  # another dtype: a copy
    a[0, 0] = 9
    assert t[0, 0].item() == 9 and c[0, 0].item() == 0
    assert minitorch.as_tensor([1, 2]).tolist() == [1, 2] and minitorch.as_tensor([1, 2]).dtype == minitorch.int64
    assert minitorch.as_tensor(np.arange(3, dtype=np.int32)).dtype == minitorch.int32
    assert minitorch.as_tensor(np.arange(3, dtype=np.uint16)).dtype == minitorch.int64  # widened, as tensor() does
    assert minitorch.as_tensor(3.5).item() == 3.5


def test_as_tensor_reads_the_array_interface():
    class Exposes:  # an object that is not an ndarray but describes its memory
        def __init__(self, a):
            self.a = a
            self.__array_interface__ = a.__array_interface__

    a = np.arange(12, dtype=np.int64).reshape(3, 4)[:, 1:]
    t = minitorch.as_tensor(Exposes(a))
    assert t.data_ptr() == a.ctypes.data and t.stride() == (4, 1)
    np.testing.assert_array_equal(t.numpy(), a)


@pytest.mark.parametrize("device", DEVICES)
def test_cuda_array_interface(device):
    t = minitorch.arange(6, dtype=minitorch.float32, device=device).reshape(2, 3)
    if device == "cuda" and not minitorch.cuda.is_emulated():
        iface = t.t().__cuda_array_interface__
        assert iface["version"] == 3 and iface["typestr"] == "<f4" and iface["shape"] == (3, 2)
        assert iface["strides"] == (4, 12) and iface["data"] == (t.data_ptr(), False)
        back = minitorch.as_tensor(type("Dev", (), {"__cuda_array_interface__": t.__cuda_array_interface__})())
        assert back.device.type == "cuda" and back.data_ptr() == t.data_ptr()
    else:  # host memory has none: a GPU library would take its address for a device pointer
        assert not hasattr(t, "__cuda_array_interface__")


def test_read_only_memory_is_never_shared_writable():
    a = np.frombuffer(bytes(16), dtype=np.float32)  # immutable bytes underneath
    t = minitorch.as_tensor(a)  # as_tensor copies what it may not write
    t.add_(1)
    assert a.tolist() == [0.0] * 4 and t.tolist() == [1.0] * 4

    class Exposes:
        __array_interface__ = a.__array_interface__

    assert minitorch.as_tensor(Exposes()).data_ptr() != a.ctypes.data
    versioned = a.__dlpack__(max_version=(1, 0)) if np.lib.NumpyVersion(np.__version__) >= "2.1.0" else None
    if versioned is not None:  # NumPy marks the capsule read-only; minitorch refuses it
        with pytest.raises(BufferError, match="read-only"):
            minitorch.from_dlpack(versioned)


def test_gpu_memory_without_a_gpu_backend_is_refused():
    class DeviceArray:  # what numba.cuda / CuPy arrays look like from the outside
        __cuda_array_interface__ = {"shape": (2,), "typestr": "<f4", "data": (1234, False), "version": 3}

    if minitorch.cuda.is_compiled() and not minitorch.cuda.is_emulated():
        pytest.skip("a GPU build would wrap the device pointer")
    with pytest.raises(TypeError, match="in GPU memory .* no GPU backend"):
        minitorch.as_tensor(DeviceArray())
