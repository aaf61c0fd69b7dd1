"""``Generator``: a seedable random stream for shuffles and splits, separate from the global one.

``minitorch.manual_seed`` seeds the global generator (``rand``, ``randn``, weight init).
A ``Generator`` is a private stream you hand to ``DataLoader``, ``RandomSampler`` or
``random_split``, so the data order stays the same when the model code draws more or
fewer random numbers.
"""
from __future__ import annotations

import os

import numpy as np

from .. import _C

# PyTorch's default seed for a new Generator(): an unseeded generator is reproducible too.
_DEFAULT_SEED = 67280421310721
_MASK64 = (1 << 64) - 1


def _check_seed(seed) -> int:
    """A seed as an unsigned 64-bit int (negative seeds wrap around, as in PyTorch)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"manual_seed: seed must be an int, but got {type(seed).__name__}")
    seed = int(seed)
    if not -(1 << 63) <= seed <= _MASK64:
        raise ValueError(f"manual_seed: seed {seed} does not fit in 64 bits")
    return seed & _MASK64


def _words(value: int, n: int) -> list[int]:
    """``value`` as ``n`` 32-bit words, lowest first (each fits an int64 tensor element)."""
    return [(value >> (32 * i)) & 0xFFFFFFFF for i in range(n)]


def _from_words(words) -> int:
    return sum(int(w) << (32 * i) for i, w in enumerate(words))


class Generator:
    """A seedable random stream (NumPy's PCG64 underneath).

    >>> g = Generator().manual_seed(0)
    >>> loader = DataLoader(ds, shuffle=True, generator=g)

    ``Generator(seed)`` is short for ``Generator().manual_seed(seed)``.
    """

    def __init__(self, seed: int | None = None, *, device="cpu"):
        if str(device) != "cpu":
            raise ValueError(f"Generator: only device='cpu' is supported, got {device!r}")
        self.device = _C.device("cpu")
        self.manual_seed(_DEFAULT_SEED if seed is None else seed)

    def manual_seed(self, seed: int) -> "Generator":
        """Restarts the stream from ``seed``; returns the generator, so it chains."""
        self._seed = _check_seed(seed)
        self._rng = np.random.default_rng(self._seed)
        return self

    def seed(self) -> int:
        """Seeds the generator from the OS's entropy and returns that seed."""
        seed = int.from_bytes(os.urandom(8), "little") >> 1  # 63 bits: positive as an int64 too
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        """The seed the stream was last started from."""
        return self._seed

    def get_state(self):
        """The whole state as an int64 tensor of 32-bit words, for :meth:`set_state`:
        the seed (2 words), PCG64's 128-bit state and increment (4 words each), and
        NumPy's buffered half-draw (2 words)."""
        s = self._rng.bit_generator.state
        words = (_words(self._seed, 2) + _words(s["state"]["state"], 4) + _words(s["state"]["inc"], 4)
                 + [int(s["has_uint32"]), int(s["uinteger"])])
        return _C.from_numpy(np.array(words, dtype=np.int64))

    def set_state(self, new_state) -> "Generator":
        """Restores a state from :meth:`get_state`; the stream continues exactly from there."""
        if not isinstance(new_state, _C.Tensor) or new_state.dtype != _C.dtype.int64 or tuple(new_state.shape) != (12,):
            raise TypeError("set_state: expected the int64 tensor of 12 elements that Generator.get_state() returns, "
                            f"got {_describe(new_state)}")
        w = [int(v) for v in new_state.detach().cpu().numpy()]
        if any(not 0 <= v <= 0xFFFFFFFF for v in w):
            raise ValueError("set_state: this tensor was not made by Generator.get_state() (a word is out of range)")
        self._seed = _from_words(w[0:2])
        self._rng = np.random.default_rng()
        self._rng.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": _from_words(w[2:6]), "inc": _from_words(w[6:10])},
            "has_uint32": w[10], "uinteger": w[11],
        }
        return self

    def permutation(self, n: int) -> np.ndarray:
        """A random order of ``range(n)`` (int64 NumPy array)."""
        return self._rng.permutation(n).astype(np.int64)

    def integers(self, high: int, size: int) -> np.ndarray:
        """``size`` random ints in ``[0, high)`` (int64 NumPy array)."""
        return self._rng.integers(0, high, size=size, dtype=np.int64)

    def choice(self, weights: np.ndarray, size: int, replace: bool) -> np.ndarray:
        """``size`` indices drawn with probabilities proportional to ``weights`` (int64 NumPy array)."""
        return self._rng.choice(len(weights), size=size, replace=replace, p=weights / weights.sum()).astype(np.int64)

    def __repr__(self) -> str:
        return f"<minitorch.Generator initial_seed={self._seed}>"


def _describe(obj) -> str:
    if isinstance(obj, _C.Tensor):
        return f"a {obj.dtype.name} tensor of shape {tuple(obj.shape)}"
    return f"a {type(obj).__name__}"


def random_seed(generator: Generator | None) -> int:
    """A fresh seed from ``generator``, or from minitorch's global generator when it is None
    (so ``minitorch.manual_seed`` makes everything drawn from it reproducible)."""
    if generator is None:
        return int(_C._randint(0, 2**62, (), None, None).item())
    return int(generator._rng.integers(0, 2**62))
