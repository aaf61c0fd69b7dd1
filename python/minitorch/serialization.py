"""``minitorch.save`` / ``minitorch.load``: state dicts in the safetensors format.

safetensors stores raw tensor bytes plus a JSON header — no pickle, so loading a
file never runs code, and PyTorch/NumPy users can read the files too.

NumPy has no bfloat16, so the safetensors NumPy functions cannot carry it: a state dict
with bfloat16 tensors is written by ``_raw_chunks`` (the same format, from the raw bytes)
and read back through ``safetensors.deserialize``.
"""
from __future__ import annotations

import json
import os
import secrets
import stat
import struct

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


def _flatten(obj, prefix: str, out: dict) -> None:
    if isinstance(obj, _C.Tensor):
        out[prefix] = obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            if not isinstance(k, str) or (prefix == "" and k == ""):
                raise TypeError(f"save: keys must be non-empty strings, got {k!r}")
            _flatten(v, f"{prefix}.{k}" if prefix else k, out)
    else:
        raise TypeError(f"save: can only save a dict of tensors (a state_dict), but {prefix or 'the object'} "
                        f"is a {type(obj).__name__}")


def save(obj, f) -> None:
    """Saves a dict of tensors (e.g. ``model.state_dict()``) to the file ``f``.

    The file appears whole or not at all (written beside it, then renamed), with the
    permissions of any new file (``0o666`` less the umask: 644 under the usual umask 022).
    """
    from safetensors.numpy import save

    tensors: dict = {}
    _flatten(obj, "", tensors)
    if any(t.dtype == _C.dtype.bfloat16 for t in tensors.values()):
        chunks = _raw_chunks(tensors)
    else:  # (safetensors' own save_file writes through a temporary file of mode 600: a TA could not read it)
        chunks = [save({k: _host_array(t) for k, t in tensors.items()})]
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


def _raw_chunks(tensors: dict) -> list:
    """The safetensors layout built directly: an 8-byte little-endian header size, a JSON
    header naming each tensor's dtype code, shape and byte range, then the bytes."""
    header, chunks, offset = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name]
        data = _host_array(t).tobytes()
        header[name] = {"dtype": _CODES[t.dtype.name], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned
    return [struct.pack("<Q", len(text)) + text, *chunks]


def load(f, map_location=None) -> dict:
    """Loads a file written by :func:`save` (or any safetensors file) as a dict of tensors.

    Raises ``ValueError`` for a file that is not safetensors or is truncated, and
    ``FileNotFoundError`` when it does not exist.
    """
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    path = os.fspath(f)
    if not os.path.exists(path):
        raise FileNotFoundError(f"load: no such file: {path!r}")
    try:
        arrays = load_file(path)
    except TypeError:  # a dtype NumPy lacks (BF16): read the raw bytes instead
        return _load_raw(path, map_location)
    except (SafetensorError, OSError, ValueError) as e:
        raise ValueError(f"load: {path!r} is not a valid safetensors file (truncated or corrupt?): {e}") from e
    import minitorch

    out = {}
    for k, v in arrays.items():
        try:
            out[k] = minitorch.tensor(v, device=map_location)
        except TypeError as e:
            raise ValueError(f"load: tensor {k!r} in {path!r} has unsupported dtype {v.dtype}") from e
    return out


def _load_raw(path: str, map_location) -> dict:
    from safetensors import SafetensorError, deserialize

    with open(path, "rb") as f:
        try:
            entries = deserialize(f.read())
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
