"""``multinomial``: indices drawn from the categorical distributions in the rows of a 1-D or
2-D tensor of non-negative weights (they need not sum to 1). The uniforms come from
``minitorch.rand`` (or the ``generator``), so ``manual_seed`` reproduces the draws.

- with replacement, each draw inverts the row's cumulative sum: the first category whose
  running total exceeds ``u * total``;
- without replacement, every category gets the key ``E / p`` with ``E ~ Exponential(1)``
  (``-log u``), and the ``num_samples`` smallest keys are the draws, in order. This is the
  same distribution as drawing one at a time and removing each category drawn.
Tensor method and function by ops/declarations.py (attached by ops/registry.py).
"""
from __future__ import annotations

import numpy as np

from .. import _C
from .._C import Tensor
from ._args import int_arg


def _uniforms(shape: tuple, generator) -> np.ndarray:
    """Uniforms in (0, 1) from minitorch's stream or ``generator``'s."""
    if generator is not None:
        u = generator._rng.random(shape)
    else:
        from .creation import rand
        u = rand(*shape, dtype=_C.dtype.float64).numpy() if shape[0] * shape[1] else np.zeros(shape)
    return np.where(u > 0, u, np.finfo(np.float64).tiny)  # -log(0) would be inf


def multinomial(self: Tensor, num_samples: int, replacement: bool = False, *, generator=None) -> Tensor:
    """``num_samples`` category indices per row of ``self`` (int64, on ``self``'s device);
    ``replacement=False`` never repeats an index within a row."""
    if not self.is_floating_point():
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {self.dtype}")
    if self.ndim not in (1, 2):
        raise RuntimeError(f"multinomial: prob_dist must be 1 or 2 dim, got shape {tuple(self.shape)}")
    n = int_arg("multinomial", "num_samples", num_samples)
    if n <= 0:
        raise RuntimeError(f"multinomial: cannot sample n_sample <= 0 samples (got {n})")
    p = self.detach().to("cpu", _C.dtype.float64).numpy().reshape(-1, self.shape[-1])
    categories = p.shape[1]
    if categories == 0:
        raise RuntimeError("multinomial: the probability tensor has no categories (its last dim is 0)")
    if not replacement and n > categories:
        raise RuntimeError(f"multinomial: cannot sample n_sample ({n}) > prob_dist.size(-1) ({categories}) "
                           "samples without replacement")
    if not np.isfinite(p).all() or (p < 0).any():
        raise RuntimeError("multinomial: probability tensor contains either `inf`, `nan` or element < 0")
    totals = p.sum(axis=1)
    if (totals <= 0).any():
        raise RuntimeError(f"multinomial: invalid multinomial distribution (sum of probabilities <= 0) in row "
                           f"{int(np.argmax(totals <= 0))}")
    if replacement:
        cdf = np.cumsum(p, axis=1)
        u = _uniforms((p.shape[0], n), generator) * cdf[:, -1:]
        idx = np.stack([np.searchsorted(c, row, side="right") for c, row in zip(cdf, u)]) if p.shape[0] else \
            np.zeros((0, n), dtype=np.int64)
        idx = np.minimum(idx, categories - 1)  # u * total rounding up to the total itself
    else:
        if ((p > 0).sum(axis=1) < n).any():
            raise RuntimeError("multinomial: invalid multinomial distribution (with replacement=False, "
                               "not enough non-negative category to sample)")
        with np.errstate(divide="ignore"):
            keys = -np.log(_uniforms(p.shape, generator)) / p  # inf where p == 0: never drawn
        idx = np.argsort(keys, axis=1, kind="stable")[:, :n]
    out = _C.from_numpy(np.ascontiguousarray(idx.astype(np.int64)).reshape(*self.shape[:-1], n))
    return out.to(self.device)
