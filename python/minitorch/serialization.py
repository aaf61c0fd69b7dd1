"""``minitorch.save`` / ``minitorch.load``: state dicts and checkpoints in the safetensors format.

safetensors stores raw tensor bytes plus a JSON header — no pickle, so loading a
file never runs code, and PyTorch/NumPy users can read the files too.

A dict of tensors (a ``state_dict``) is saved as it is: one safetensors entry per key. Any
other object (a checkpoint such as ``{"epoch": 5, "model_state_dict": ..., "optimizer_state_dict":
..., "loss": 0.3}``: nested dicts, lists and tuples of tensors, numbers, strings, None and bools)
is saved as its tensors, named by their path (``model_state_dict.fc.weight``), plus its structure
as JSON in the header's ``__metadata__`` (``_STRUCTURE``), from which :func:`load` rebuilds it:
tuples stay tuples, ints ints, and dict keys keep their type (an optimizer's state is keyed by int).

Small tensors of a checkpoint (at most ``_SMALL_NUMEL`` values: scalars, biases, the per-channel
scales and zero points of quantized weights) would each cost a header entry several times their
size; they share one entry instead, ``minitorch.small`` (raw bytes), each referenced from the
structure by its offset, safetensors dtype code and shape, and stored in the narrowest dtype that
holds its values exactly (float64 scales that are float32 numbers as float32, int64 zero points
as int8): on load it gets its own dtype back. A structure longer than ``_PLAIN_STRUCTURE`` characters
(a model's state dict: every key, dtype and reference) is stored zlib-compressed and base64-encoded
under ``minitorch.structure.zlib`` instead. A quantized model's file is then close to its numbers'
size (notebook 11). A flat state dict of tensors keeps one named entry per tensor.

NumPy has no bfloat16, so the safetensors NumPy functions cannot carry it: a state dict
with bfloat16 tensors is written by ``_raw_chunks`` (the same format, from the raw bytes)
and read back through ``safetensors.deserialize``.
"""
from __future__ import annotations

import base64
import json
import numbers
import os
import secrets
import stat
import struct
import zlib

import numpy as np

from . import _C

# safetensors' dtype codes, and the NumPy type that reads each one's bytes (BF16: its bits).
_CODES = {"float32": "F32", "float64": "F64", "float16": "F16", "bfloat16": "BF16", "int64": "I64", "bool": "BOOL",
          "int32": "I32", "int16": "I16", "int8": "I8", "uint8": "U8"}
_READ = {"F32": np.float32, "F64": np.float64, "F16": np.float16, "BF16": np.uint16, "I64": np.int64,
         "BOOL": np.bool_, "I32": np.int32, "I16": np.int16, "I8": np.int8, "U8": np.uint8}


def _host_array(t: _C.Tensor) -> np.ndarray:
    """A C-contiguous NumPy copy of t's values; for bfloat16, of its bits (uint16)."""
    t = t.detach().cpu()
    arr = _C._numpy_bits(t) if t.dtype == _C.dtype.bfloat16 else t.numpy()
    return np.array(arr, order="C")  # keeps 0-dim tensors 0-dim


_STRUCTURE = "minitorch.structure"  # the __metadata__ key holding a checkpoint's structure
_STRUCTURE_ZLIB = "minitorch.structure.zlib"  # the same, compressed (long structures)
_PLAIN_STRUCTURE = 512
_SMALL = "minitorch.small"  # the entry holding a checkpoint's small tensors, packed
_SMALL_NUMEL = 64
_NARROWER = {"float64": (np.float32,), "int64": (np.int8, np.int16, np.int32), "int32": (np.int8, np.int16),
             "int16": (np.int8,)}
_CODE_OF = {np.dtype(v): k for k, v in _READ.items() if k != "BF16"}


class _Small:
    """The small tensors of a checkpoint being saved, packed into one byte string."""

    def __init__(self):
        self.chunks, self.size = [], 0

    def add(self, t: _C.Tensor) -> list:
        """Stores t; returns its reference: [offset, dtype code, shape] (+ its dtype if narrowed)."""
        arr = _host_array(t)
        ref_dtype = None
        for narrow in _NARROWER.get(t.dtype.name, ()):
            cand = arr.astype(narrow)
            if np.array_equal(cand.astype(arr.dtype), arr, equal_nan=arr.dtype.kind == "f") and \
                    np.array_equal(np.signbit(cand), np.signbit(arr)):  # exact, -0.0 and NaN included
                arr, ref_dtype = cand, t.dtype.name
                break
        pad = -self.size % arr.dtype.itemsize  # each value aligned to its size
        self.chunks.append(b"\0" * pad + arr.tobytes())
        offset = self.size + pad
        self.size = offset + arr.nbytes
        ref = [offset, _CODE_OF[arr.dtype], list(arr.shape)]
        return ref + [ref_dtype] if ref_dtype else ref


def _is_state_dict(obj) -> bool:
    """A flat dict of non-empty str keys to tensors: saved entry by entry, with no structure."""
    return isinstance(obj, dict) and all(isinstance(k, str) and k and isinstance(v, _C.Tensor)
                                         for k, v in obj.items())


def _encode(obj, path: str, tensors: dict, small: _Small | None = None):
    """``obj`` as JSON, its tensors moved into ``tensors`` (by a unique name, from ``path``) or,
    when small, into ``small``: numbers, strings, bools and None are themselves; the rest a
    one-key object saying its type."""
    if isinstance(obj, _C.Tensor):
        if small is not None and obj.numel() <= _SMALL_NUMEL and obj.dtype.name in _CODES and \
                obj.dtype != _C.dtype.bfloat16:
            return {"small": small.add(obj)}
        name, n = path or "tensor", 1
        while name in tensors:  # "a.b" of {"a.b": t} and of {"a": {"b": t}}: keep both
            name, n = f"{path}#{n}", n + 1
        tensors[name] = obj
        return {"tensor": name}
    if getattr(obj, "__minitorch_quantized__", False):  # a quantized tensor: its integers + qparams
        return {"qtensor": _encode_qtensor(obj, path, tensors, small)}
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, numbers.Integral):
        return int(obj)
    if isinstance(obj, numbers.Real):
        return float(obj)  # inf and nan too (JSON's Infinity / NaN)
    if isinstance(obj, _C.dtype) or getattr(obj, "is_quantized", None) is True and hasattr(obj, "qmin"):
        return {"dtype": obj.name}
    if isinstance(obj, _C.device):
        return {"device": str(obj)}
    if isinstance(obj, (list, tuple)):
        items = [_encode(v, f"{path}.{i}" if path else str(i), tensors, small) for i, v in enumerate(obj)]
        return {"tuple" if isinstance(obj, tuple) else "list": items}
    if isinstance(obj, dict):
        return {"dict": [[_encode(k, "", {}) if not isinstance(k, _C.Tensor) else _bad_key(k),
                          _encode(v, f"{path}.{k}" if path else str(k), tensors, small)] for k, v in obj.items()]}
    raise TypeError(f"save: cannot save {path or 'the object'}, a {type(obj).__name__}: a checkpoint holds "
                    "tensors, numbers, strings, bools, None, dtypes and devices in dicts, lists and tuples")


def _encode_qtensor(q, path: str, tensors: dict, small: _Small | None = None) -> dict:
    """A quantized tensor as its int_repr (an ordinary safetensors entry, uint8 / int8 / int32,
    named by its path, unless small), its per-channel scales and zero points (small tensors, or
    entries beside it) and the rest of its qparams as JSON."""
    out = {"int_repr": _encode(q._data, path, tensors, small), "dtype": q.dtype.name, "qscheme": q.qscheme().name}
    if q._axis is None:
        out.update(scale=float(q._scale), zero_point=int(q._zero_point))
    else:
        out.update(scales=_encode(q._scales, f"{path}.q_per_channel_scales", tensors, small),
                   zero_points=_encode(q._zero_points, f"{path}.q_per_channel_zero_points", tensors, small),
                   axis=int(q._axis))
    return out


def _decode_qtensor(v: dict, tensors: dict, small=None):
    from ._quantized import _rebuild_qtensor

    if "axis" in v:
        return _rebuild_qtensor(_decode(v["int_repr"], tensors, small), v["dtype"], v["qscheme"], None, None,
                                _decode(v["scales"], tensors, small).cpu(),
                                _decode(v["zero_points"], tensors, small).cpu(), v["axis"])
    return _rebuild_qtensor(_decode(v["int_repr"], tensors, small), v["dtype"], v["qscheme"], v["scale"],
                            v["zero_point"], None, None, None)


class _SmallReader:
    """The small tensors of a loaded checkpoint, from the bytes of its ``minitorch.small`` entry."""

    def __init__(self, blob: bytes, map_location):
        self.blob, self.map_location = blob, map_location

    def get(self, ref: list):
        import minitorch

        offset, code, shape = ref[0], ref[1], ref[2]
        count = int(np.prod(shape, dtype=np.int64))
        arr = np.frombuffer(self.blob, dtype=_READ[code], count=count, offset=offset).reshape(shape).copy()
        t = minitorch.tensor(arr, device=self.map_location)
        return t.to(getattr(_C.dtype, ref[3])) if len(ref) > 3 else t


def _bad_key(k):
    raise TypeError("save: a dict key cannot be a tensor")


def _decode(obj, tensors: dict, small: _SmallReader | None = None):
    if not isinstance(obj, dict):
        return obj
    (kind, value), = obj.items()
    if kind == "tensor":
        return tensors[value]
    if kind == "small":
        return small.get(value)
    if kind == "list":
        return [_decode(v, tensors, small) for v in value]
    if kind == "tuple":
        return tuple(_decode(v, tensors, small) for v in value)
    if kind == "dict":
        return {_decode(k, tensors, small): _decode(v, tensors, small) for k, v in value}
    if kind == "qtensor":
        return _decode_qtensor(value, tensors, small)
    if kind == "dtype":
        from . import _quantized

        return _quantized._QDTYPES[value] if value in _quantized._QDTYPES else getattr(_C.dtype, value)
    if kind == "device":
        return _C.device(value)
    raise ValueError(f"load: unknown entry {kind!r} in the checkpoint's structure")


def save(obj, f) -> None:
    """Saves ``obj`` to the file ``f`` (a path, or a binary file object): a dict of tensors
    (``model.state_dict()``), or a checkpoint of nested dicts, lists and tuples of tensors,
    numbers, strings, bools and None (see the module's docstring).

    A path's file appears whole or not at all (written beside it, then renamed), with the
    permissions of any new file (``0o666`` less the umask: 644 under the usual umask 022).
    """
    from safetensors.numpy import save

    tensors: dict = {}
    metadata = None
    if _is_state_dict(obj):
        tensors = dict(obj)
    else:
        small = _Small()
        structure = json.dumps(_encode(obj, "", tensors, small), separators=(",", ":"))
        if len(structure) <= _PLAIN_STRUCTURE:
            metadata = {_STRUCTURE: structure}
        else:
            metadata = {_STRUCTURE_ZLIB: base64.b64encode(zlib.compress(structure.encode(), 9)).decode()}
        if small.size:
            tensors[_SMALL] = _C.from_numpy(np.frombuffer(b"".join(small.chunks), np.uint8).copy())
    if any(t.dtype == _C.dtype.bfloat16 for t in tensors.values()):
        chunks = _raw_chunks(tensors, metadata)
    else:  # (safetensors' own save_file writes through a temporary file of mode 600: a TA could not read it)
        chunks = [save({k: _host_array(t) for k, t in tensors.items()}, metadata=metadata)]
    if hasattr(f, "write"):
        for c in chunks:
            f.write(c)
    else:
        _write_atomically(os.fspath(f), chunks)


def _write_atomically(path: str, chunks) -> None:
    """Writes ``chunks`` to a new file next to ``path`` and renames it over ``path``."""
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as to any new file
    try:
        with os.fdopen(fd, "wb") as out:
            for c in chunks:
                out.write(c)
        if os.path.exists(path):  # overwriting keeps the file's permissions, as open(path, "wb") would
            os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _raw_chunks(tensors: dict, metadata=None) -> list:
    """The safetensors layout built directly: an 8-byte little-endian header size, a JSON
    header naming each tensor's dtype code, shape and byte range, then the bytes."""
    header, chunks, offset = ({"__metadata__": metadata} if metadata else {}), [], 0
    for name in sorted(tensors):
        t = tensors[name]
        data = _host_array(t).tobytes()
        header[name] = {"dtype": _CODES[t.dtype.name], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned
    return [struct.pack("<Q", len(text)) + text, *chunks]


def load(f, map_location=None, *, weights_only=None, mmap=None):
    """Loads what :func:`save` wrote to ``f`` (a path or a binary file object): a dict of
    tensors, or the checkpoint as it was saved; any other safetensors file loads as a dict
    of tensors. ``map_location`` moves every tensor to that device. Loading never runs code
    (there is no pickle), so ``weights_only`` is accepted for PyTorch's sake and changes nothing.

    Raises ``ValueError`` for a file that is not safetensors or is truncated, and
    ``FileNotFoundError`` when it does not exist.
    """
    from safetensors import SafetensorError
    from safetensors.numpy import load as load_bytes

    if hasattr(f, "read"):
        path, data = getattr(f, "name", "<file object>"), f.read()
    else:
        path = os.fspath(f)
        if not os.path.exists(path):
            raise FileNotFoundError(f"load: no such file: {path!r}")
        with open(path, "rb") as file:
            data = file.read()
    try:
        arrays = load_bytes(data)
    except (TypeError, KeyError):  # a dtype NumPy lacks (BF16): read the raw bytes instead
        out = _load_raw(data, path, map_location)
    except (SafetensorError, OSError, ValueError) as e:
        raise ValueError(f"load: {path!r} is not a valid safetensors file (truncated or corrupt?): {e}") from e
    else:
        import minitorch

        out = {}
        for k, v in arrays.items():
            try:
                out[k] = minitorch.tensor(v, device=map_location)
            except TypeError as e:
                raise ValueError(f"load: tensor {k!r} in {path!r} has unsupported dtype {v.dtype}") from e
    meta = _metadata(data)
    structure = meta.get(_STRUCTURE)
    if structure is None and _STRUCTURE_ZLIB in meta:
        try:
            structure = zlib.decompress(base64.b64decode(meta[_STRUCTURE_ZLIB])).decode()
        except (ValueError, zlib.error) as e:
            raise ValueError(f"load: {path!r} has a corrupt checkpoint structure: {e}") from e
    if structure is None:
        return out
    blob = out.pop(_SMALL, None)
    small = _SmallReader(b"" if blob is None else blob.cpu().numpy().tobytes(), map_location)
    try:
        return _decode(json.loads(structure), out, small)
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise ValueError(f"load: {path!r} has a corrupt checkpoint structure: {e}") from e


def _metadata(data: bytes) -> dict:
    """The header's ``__metadata__`` (str -> str) of a valid safetensors file's bytes."""
    (size,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + size]).get("__metadata__") or {}


def _load_raw(data: bytes, path: str, map_location) -> dict:
    from safetensors import SafetensorError, deserialize

    try:
        entries = deserialize(data)
    except (SafetensorError, ValueError) as e:
        raise ValueError(f"load: {path!r} is not a valid safetensors file (truncated or corrupt?): {e}") from e
    import minitorch

    out = {}
    for name, e in entries:
        if e["dtype"] not in _READ:
            raise ValueError(f"load: tensor {name!r} in {path!r} has unsupported dtype {e['dtype']}")
        arr = np.frombuffer(bytes(e["data"]), dtype=_READ[e["dtype"]]).reshape(e["shape"])
        t = _C._from_numpy_bits(arr, "bfloat16") if e["dtype"] == "BF16" else minitorch.tensor(arr)
        out[name] = t.to(map_location) if map_location is not None else t
    return out
