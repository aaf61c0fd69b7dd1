"""Sharing memory with other array libraries, without copies.

- **DLPack** (``Tensor.__dlpack__``, ``__dlpack_device__``, ``minitorch.from_dlpack``): the
  protocol NumPy, PyTorch, CuPy and JAX all speak. ``np.from_dlpack(t)`` sees a CPU
  tensor's memory; ``minitorch.from_dlpack(x)`` sees theirs.
- **``__cuda_array_interface__``** (version 3) on ``cuda`` tensors of a GPU build, read by
  numba.cuda and CuPy; ``minitorch.as_tensor`` accepts objects that expose it (or NumPy's
  ``__array_interface__``).

In the emulator a "cuda" tensor lives in host memory, so it is exported as CPU
memory (device type 1), and it has no ``__cuda_array_interface__``: a GPU library would
take its address for a device pointer.
"""
from __future__ import annotations

import numpy as np

from . import _C
from ._C import Tensor
from .ops.creation import tensor

# DLPack device types (dlpack.h) minitorch produces or accepts.
_KDL_CPU, _KDL_CUDA, _KDL_CUDA_HOST, _KDL_CUDA_MANAGED = 1, 2, 3, 13

_TYPESTR = {"float32": "<f4", "float64": "<f8", "float16": "<f2", "int64": "<i8", "bool": "|b1",
            "int32": "<i4", "int16": "<i2", "int8": "|i1", "uint8": "|u1"}
_FROM_TYPESTR = {"f4": "float32", "f8": "float64", "f2": "float16", "i8": "int64", "b1": "bool",
                 "i4": "int32", "i2": "int16", "i1": "int8", "u1": "uint8"}


def _on_gpu(t: Tensor) -> bool:
    return t.device.type == "cuda" and not _C._cuda_is_emulated()


def dlpack_device(self):
    """``(device_type, device_id)`` as DLPack numbers them: (1, 0) for CPU, (2, i) for cuda:i."""
    return (_KDL_CUDA, self.device.index or 0) if _on_gpu(self) else (_KDL_CPU, 0)


def dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule over this tensor's memory (the consumer's side of the protocol).

    ``stream``: the consumer's CUDA stream; minitorch finishes its own work first.
    ``max_version``: the newest DLPack the consumer reads; (1, x) gets the versioned struct.
    ``copy=True`` exports a copy; ``copy=False`` never copies; ``dl_device`` must be this
    tensor's own device (minitorch does not move memory here).
    """
    if dl_device is not None and tuple(dl_device) != dlpack_device(self):
        raise BufferError(f"__dlpack__: the tensor is on {self.device} {dlpack_device(self)}; "
                          f"exporting to device {tuple(dl_device)} is not supported")
    if stream is not None and not isinstance(stream, int):
        raise TypeError(f"__dlpack__: stream must be an int or None, got {type(stream).__name__}")
    t = self.clone() if copy else self
    versioned = max_version is not None and tuple(max_version)[0] >= 1
    return _C._to_dlpack(t, versioned)


def cuda_array_interface(self):
    if not _on_gpu(self):
        where = "the emulator keeps 'cuda' tensors in host memory" if self.device.type == "cuda" \
            else "the tensor is on the CPU"
        raise AttributeError(f"__cuda_array_interface__: only GPU tensors have it ({where})")
    if self.requires_grad:
        raise RuntimeError("__cuda_array_interface__: can't export a tensor that requires grad; "
                           "use tensor.detach() first")
    if self.dtype.name not in _TYPESTR:  # the array interface has no bfloat16: DLPack carries it
        raise TypeError(f"__cuda_array_interface__: no typestr for {self.dtype}; use __dlpack__ instead")
    item = self.element_size()
    return {
        "shape": tuple(self.shape),
        "typestr": _TYPESTR[self.dtype.name],
        "data": (self.data_ptr(), False),
        "version": 3,
        "strides": None if self.is_contiguous() else tuple(s * item for s in self.stride()),
        "stream": 1,  # minitorch launches everything on the legacy default stream
    }


def from_dlpack(ext) -> Tensor:
    """A tensor sharing memory with ``ext``: any object with ``__dlpack__`` (a NumPy array,
    a PyTorch / CuPy / JAX tensor) or a DLPack capsule. Like ``torch.from_dlpack``."""
    if isinstance(ext, Tensor):
        return ext
    if hasattr(ext, "__dlpack__"):
        device_type, _ = ext.__dlpack_device__()
        # GPU producers get our stream (1: the legacy default one) to order their work before ours.
        stream = 1 if device_type in (_KDL_CUDA, _KDL_CUDA_MANAGED) else None
        try:
            capsule = ext.__dlpack__(stream=stream, max_version=(1, 0))
        except TypeError:  # a producer older than DLPack 1.0 takes no max_version
            capsule = ext.__dlpack__(stream=stream) if stream is not None else ext.__dlpack__()
        return _C._from_dlpack_capsule(capsule)
    if type(ext).__name__ == "PyCapsule":
        return _C._from_dlpack_capsule(ext)
    raise TypeError(f"from_dlpack: expected an object with __dlpack__ or a DLPack capsule, got {type(ext).__name__}")


def to_dlpack(tensor: Tensor):
    """The DLPack capsule of ``tensor`` (``torch.utils.dlpack.to_dlpack``)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack: expected a Tensor, got {type(tensor).__name__}")
    return _C._to_dlpack(tensor, False)


def _from_interface(obj, iface: dict, device: str) -> Tensor:
    """A tensor over the memory an ``__array_interface__``-style dict describes, keeping ``obj`` alive."""
    typestr = iface["typestr"]
    name = _FROM_TYPESTR.get(typestr[1:])
    if name is None or (typestr[0] == ">" and typestr[1:] != "b1"):
        raise TypeError(f"as_tensor: minitorch has no dtype for typestr {typestr!r} "
                        "(supported: float32, float64, int64, bool in native byte order)")
    if iface.get("mask") is not None:
        raise ValueError("as_tensor: masked arrays are not supported")
    ptr, read_only = iface["data"]
    if read_only:
        raise BufferError("as_tensor: the memory is read-only and minitorch tensors are writable")
    shape = tuple(int(s) for s in iface["shape"])
    item = np.dtype(name).itemsize
    if iface.get("strides") is None:
        strides, step = [], 1
        for s in reversed(shape):
            strides.insert(0, step)
            step *= max(s, 1)
    else:
        strides = []
        for s in iface["strides"]:
            if s % item:
                raise ValueError(f"as_tensor: stride of {s} bytes is not a multiple of the {item}-byte element")
            strides.append(s // item)
    if device == "cuda" and iface.get("stream") not in (None, 1, 2):
        _C._cuda_synchronize()  # the producer's stream may still be writing
    return _C._from_blob(int(ptr or 0), list(shape), strides, getattr(_C.dtype, name), device, obj)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like ``torch.as_tensor``: shares memory with ``data`` when it can, copies when it must.

    A tensor, a NumPy array, or an object exposing ``__cuda_array_interface__`` (numba.cuda,
    CuPy) or ``__dlpack__`` is used as it is when ``dtype`` and ``device`` match (or are
    None); otherwise, and for lists and numbers, the data is copied like ``tensor()`` does.
    """
    want_device = None if device is None else _C.device(device) if isinstance(device, str) else device
    shared = None
    if isinstance(data, Tensor):
        shared = data
    elif hasattr(data, "__cuda_array_interface__"):
        if not _C._cuda_compiled or _C._cuda_is_emulated():  # no GPU backend, or the emulator serves "cuda"
            raise TypeError(f"as_tensor: the {type(data).__name__} is in GPU memory (it has "
                            "__cuda_array_interface__), and this minitorch has no GPU backend; copy it to the "
                            "host in its own library first")
        shared = _from_interface(data, data.__cuda_array_interface__, "cuda")
    elif isinstance(data, np.ndarray):
        # Read-only arrays are copied: minitorch tensors are always writable.
        if data.dtype.name in _TYPESTR and data.dtype.isnative and data.flags.writeable \
                and all(s >= 0 for s in data.strides):
            shared = _C.from_numpy(data)
    elif hasattr(data, "__dlpack__"):
        shared = from_dlpack(data)
    elif hasattr(data, "__array_interface__"):
        iface = data.__array_interface__
        if iface.get("typestr", "")[1:] in _FROM_TYPESTR and not iface.get("mask") and not iface["data"][1]:
            shared = _from_interface(data, iface, "cpu")
    if shared is None:
        return tensor(data, dtype=dtype, device=device)
    if dtype is not None and shared.dtype != dtype or want_device is not None and shared.device != want_device:
        return shared.to(device=want_device if want_device is not None else shared.device,
                         dtype=dtype if dtype is not None else shared.dtype)
    return shared
