"""``minitorch.random``: the global generator's seed and state, with ``torch.random``'s names
(``manual_seed``, ``seed``, ``initial_seed``, ``get_rng_state``, ``set_rng_state``; also
``minitorch.<name>``).

The global generator is the CPU's Mersenne Twister (``cpp/src/cpu/random.cpp``): ``rand``,
``randn``, ``randint``, dropout masks and weight initialisation draw from it, and
``manual_seed`` also reseeds the "cuda" generator (``minitorch.cuda.get_rng_state`` holds
that one's state). A ``minitorch.Generator`` is a separate stream for shuffles and splits.

    >>> state = minitorch.get_rng_state()
    >>> a = minitorch.rand(3)
    >>> minitorch.set_rng_state(state)
    >>> bool((minitorch.rand(3) == a).all())   # the same draws again
    True
"""
from __future__ import annotations

import operator
import os

import numpy as np

from . import _C
from .data.generator import _check_seed

__all__ = ["fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state"]

# The seed the CPU generator starts from until manual_seed or seed is called: C++'s default
# for std::mt19937_64 (PyTorch's default generator starts from 67280421310721 instead).
_initial_seed = 5489
_SEED_BYTES = 8


def manual_seed(seed: int) -> None:
    """Seeds the generator of every device (the CPU's and the "cuda" one), so that what is
    drawn from them afterwards is the same on every run. A negative seed wraps around to
    an unsigned 64-bit one, as in PyTorch."""
    global _initial_seed
    if isinstance(seed, _C.Tensor):  # a one-element integer tensor, as before (its __index__) and in PyTorch
        seed = operator.index(seed)
    seed = _check_seed(seed)
    _C.manual_seed(seed - (1 << 64) if seed >= 1 << 63 else seed)  # the same 64 bits as a C++ int64
    _initial_seed = seed


def seed() -> int:
    """Seeds every device's generator from the operating system's entropy (``os.urandom``)
    and returns that seed (63 random bits), so a run can be reproduced later."""
    value = int.from_bytes(os.urandom(8), "little") >> 1
    manual_seed(value)
    return value


def initial_seed() -> int:
    """The seed the CPU generator was last seeded with (``manual_seed``, ``seed``, or a state
    restored by ``set_rng_state``); 5489 before any of them."""
    return _initial_seed


def get_rng_state():
    """The CPU generator's state as a uint8 tensor for :func:`set_rng_state`: its initial seed
    (8 bytes, little-endian), then the Mersenne Twister's state as C++'s ``operator<<``
    writes it (its 312 words and position, in decimal text)."""
    data = _initial_seed.to_bytes(_SEED_BYTES, "little") + _C._cpu_rng_state()
    return _C._from_numpy_copy(np.frombuffer(data, dtype=np.uint8).copy(), _C.dtype.uint8, None)


def set_rng_state(new_state) -> None:
    """Puts the CPU generator back at a state from :func:`get_rng_state`: the draws that
    followed it come again. TypeError unless ``new_state`` is such a uint8 tensor; a
    corrupted one raises ValueError."""
    global _initial_seed
    if not isinstance(new_state, _C.Tensor) or new_state.dtype != _C.dtype.uint8 or new_state.ndim != 1 \
            or new_state.numel() <= _SEED_BYTES:
        what = (f"a {new_state.dtype.name} tensor of shape {tuple(new_state.shape)}" if isinstance(new_state, _C.Tensor)
                else f"a {type(new_state).__name__}")
        raise TypeError(f"set_rng_state: expected the 1-D uint8 tensor that get_rng_state returns, got {what}")
    data = new_state.detach().cpu().numpy().tobytes()
    _C._set_cpu_rng_state(data[_SEED_BYTES:])
    _initial_seed = int.from_bytes(data[:_SEED_BYTES], "little")


class fork_rng:
    """``with minitorch.random.fork_rng(): ...``: the draws inside the block leave the
    generators as they were (their states are saved on entry and restored on exit) — the CPU
    generator, and the "cuda" one where there is CUDA (``devices=[]``: the CPU only).
    ``enabled=False`` does nothing."""

    def __init__(self, devices=None, enabled: bool = True, device_type: str = "cuda") -> None:
        self.enabled = enabled
        self.devices = devices

    def __enter__(self):
        if not self.enabled:
            return self
        from . import cuda
        self._cpu = get_rng_state()
        self._cuda = cuda.get_rng_state() if cuda.is_available() and (self.devices is None or list(self.devices)) \
            else None
        self._seed = _initial_seed
        return self

    def __exit__(self, *exc) -> bool:
        global _initial_seed
        if self.enabled:
            set_rng_state(self._cpu)
            _initial_seed = self._seed
            if self._cuda is not None:
                from . import cuda
                cuda.set_rng_state(self._cuda)
        return False
