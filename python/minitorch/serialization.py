"""``minitorch.save`` / ``minitorch.load``: state dicts in the safetensors format.

safetensors stores raw tensor bytes plus a JSON header — no pickle, so loading a
file never runs code, and PyTorch/NumPy users can read the files too.
"""
from __future__ import annotations

import os

import numpy as np

from . import _C


def _flatten(obj, prefix: str, out: dict) -> None:
    if isinstance(obj, _C.Tensor):
        out[prefix] = np.array(obj.detach().cpu().numpy(), order="C")  # keeps 0-dim tensors 0-dim
    elif isinstance(obj, dict):
        for k, v in obj.items():
            if not isinstance(k, str) or (prefix == "" and k == ""):
                raise TypeError(f"save: keys must be non-empty strings, got {k!r}")
            _flatten(v, f"{prefix}.{k}" if prefix else k, out)
    else:
        raise TypeError(f"save: can only save a dict of tensors (a state_dict), but {prefix or 'the object'} "
                        f"is a {type(obj).__name__}")


def save(obj, f) -> None:
    """Saves a dict of tensors (e.g. ``model.state_dict()``) to the file ``f``."""
    from safetensors.numpy import save_file

    arrays: dict = {}
    _flatten(obj, "", arrays)
    save_file(arrays, os.fspath(f))


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
