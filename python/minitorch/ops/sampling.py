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

import warnings

import numpy as np

from .. import _C
from .._C import Tensor
from ..autograd.function import Function
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


# ---- randperm, bernoulli, normal: draws from minitorch's stream (manual_seed reproduces
# them) or, given a ``generator`` (minitorch.Generator), from its NumPy stream on the host.

def _draws(kind: str, shape: tuple, dtype, device, generator) -> Tensor:
    """Uniforms in [0, 1) or standard normals of ``shape``, on ``device``."""
    from .creation import rand, randn
    if generator is None:
        return (rand if kind == "uniform" else randn)(*shape, dtype=dtype, device=device)
    rng = generator._rng
    values = rng.random(shape) if kind == "uniform" else rng.standard_normal(shape)
    return _C.from_numpy(np.ascontiguousarray(values)).to("cpu" if device is None else device, dtype)


# The integers a floating dtype holds exactly: [-2**digits, 2**digits] (PyTorch's bounds for random_).
_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def _integer_range(dtype) -> tuple:
    """The integers random_ draws into ``dtype`` without bounds given: [0, 2**digits] for a
    floating dtype, [0, max] for an integer one, [0, 1] for bool (PyTorch's)."""
    if dtype.is_floating_point:
        return 0, 2 ** _DIGITS[dtype.name]
    if dtype == _C.dtype.bool:
        return 0, 1
    from .._finfo import iinfo
    return 0, iinfo(dtype).max


def _check_random_range(op: str, low: int, high: int, dtype) -> None:
    """``[low, high]`` (both included) must fit ``dtype`` (PyTorch's check_from_to_in_range);
    a floating dtype beyond +-2**digits draws inexact integers: a UserWarning, as PyTorch's."""
    if dtype.is_floating_point:
        from .._finfo import finfo
        lowest, highest = -finfo(dtype).max, finfo(dtype).max
    elif dtype == _C.dtype.bool:
        lowest, highest = 0, 1
    else:
        from .._finfo import iinfo
        lowest, highest = iinfo(dtype).min, iinfo(dtype).max
    for what, v in (("from", low), ("to - 1", high)):
        if not lowest <= v <= highest:
            raise _C.InputError(f"{op}: {what} is out of bounds for {dtype.name} ({what} = {v})")
        if dtype.is_floating_point and abs(v) > 2 ** _DIGITS[dtype.name]:
            digits = _DIGITS[dtype.name]
            warnings.warn(f"{op}: {what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations "
                          f"{dtype.name} can support discrete uniform distribution only within this range.",
                          UserWarning, stacklevel=3)


def _integers(shape: tuple, low: int, high: int, device, generator=None) -> Tensor:
    """int64 integers drawn uniformly from ``[low, high]`` (both included; the range may hold
    all 2**64 int64 values), of ``shape`` on ``device``, from minitorch's stream (so
    ``manual_seed`` reproduces them) or ``generator``'s."""
    span = high - low + 1
    if generator is not None:
        values = generator._rng.integers(low, high, size=shape, endpoint=True, dtype=np.int64)
        return _C.from_numpy(np.ascontiguousarray(values)).to(device)
    if span <= 2 ** 53:  # every device's randint takes a range this wide
        return _C._randint(0, span, list(shape), _C.dtype.int64, device) + low
    # Wider: 64 random bits from two 32-bit draws, taken modulo the range as PyTorch does, in
    # uint64 on the host.
    hi, lo = (_C._randint(0, 2 ** 32, list(shape), _C.dtype.int64, device).cpu().numpy().astype(np.uint64)
              for _ in range(2))
    bits = (hi << np.uint64(32)) | lo
    if span < 2 ** 64:
        bits %= np.uint64(span)
    values = (bits + np.uint64(low % 2 ** 64)).view(np.int64)
    return _C.from_numpy(np.ascontiguousarray(values)).to(device)


def _float_dtype(*tensors):
    """The floating dtype draws are made in: the tensors' (promoted), else the default."""
    from .. import get_default_dtype, promote_types
    floats = [t.dtype for t in tensors if isinstance(t, Tensor) and t.dtype.is_floating_point]
    if not floats:
        return get_default_dtype()
    out = floats[0]
    for d in floats[1:]:
        out = promote_types(out, d)
    return out


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype``). Each position gets a
    random 53-bit key and the keys are sorted (one draw and one sort: on a GPU, CUB's radix
    sort), the way PyTorch's CUDA randperm works; with ``generator``, NumPy's shuffle.

    >>> minitorch.manual_seed(0); minitorch.randperm(5).sort().values
    tensor([0, 1, 2, 3, 4])
    """
    from .. import int64
    n = int_arg("randperm", "n", n)
    if n < 0:
        raise _C.InputError(f"randperm: n must be non-negative, got {n}")
    dtype = int64 if dtype is None else dtype
    if dtype == _C.dtype.bool:
        raise TypeError("randperm: a permutation cannot be bool; use an integer or floating dtype")
    if dtype.is_floating_point:
        exact = {"float16": 2 ** 11, "bfloat16": 2 ** 8, "float32": 2 ** 24, "float64": 2 ** 53}[dtype.name]
        if n > exact + 1:
            raise _C.InputError(f"randperm: n is too large for result tensor type: {dtype} (n={n})")
    else:
        from .._finfo import iinfo
        if n - 1 > iinfo(dtype).max:
            raise _C.InputError(f"randperm: n is too large for result tensor type: {dtype} (n={n})")
    if generator is not None:
        perm = _C.from_numpy(generator._rng.permutation(n).astype(np.int64)).to("cpu" if device is None else device)
    else:
        keys = _C._randint(0, 2 ** 53, [n], int64, device)  # ties (n ** 2 / 2 ** 54 likely) keep their order
        perm = _C._sort(keys, 0, False)[1]
    out = perm.to(dtype)
    return out.requires_grad_() if requires_grad else out


class _ZeroGradient(Function):
    """A draw joined to the graph of its parameters with a zero gradient for each, as
    PyTorch's normal and bernoulli (their derivatives are defined as zeros: no
    reparameterization), so that a backward() through a sample still runs."""

    @staticmethod
    def forward(ctx, sample, *params):
        ctx.params = [(tuple(p.shape), p.dtype, p.device) for p in params]
        return sample

    # derivative of normal, input mean: 0
    # derivative of normal, input std: 0
    # derivative of bernoulli, input input: 0
    @staticmethod
    def backward(ctx, grad):
        from .creation import zeros
        return (None, *(zeros(shape, dtype=dtype, device=device) for shape, dtype, device in ctx.params))


def _zero_gradient(sample: Tensor, *params: Tensor) -> Tensor:
    """sample, joined by _ZeroGradient to the graph of those params that require grad (when
    none does, or grad is off, there is no graph to join: the sample as it is)."""
    if _C.is_grad_enabled() and any(p.requires_grad for p in params):
        return _ZeroGradient.apply(sample, *params)
    return sample


def _check_probabilities(op: str, p: Tensor) -> None:
    """p in [0, 1] (NaN refused). Read on the host for a CPU tensor only: on a GPU it would
    wait for the device (PyTorch asserts in its kernel there); there p < 0 draws 0 and
    p > 1 draws 1."""
    if p.device.type == "cpu" and p.numel():
        from .. import no_grad
        with no_grad():
            bad = (~((p >= 0) & (p <= 1))).any().item()
        if bad:
            raise _C.InputError(f"{op}: expected every probability in [0, 1], got min {p.min().item()}, "
                                f"max {p.max().item()}")


def bernoulli(input: Tensor, p=None, *, generator=None) -> Tensor:
    """0 or 1 in ``input``'s dtype and shape: 1 with probability ``input`` (or the float
    ``p``) at each element. Its gradient with respect to ``input`` is zero, as PyTorch's.

    >>> minitorch.bernoulli(minitorch.tensor([0.0, 1.0]))
    tensor([0., 1.])
    """
    from .. import no_grad
    if not isinstance(input, Tensor):
        raise TypeError(f"bernoulli(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if p is not None:
        if isinstance(p, Tensor) or isinstance(p, bool) or not isinstance(p, (int, float)):
            raise TypeError(f"bernoulli(): argument 'p' must be a float, not {type(p).__name__}")
        if not 0 <= p <= 1:
            raise _C.InputError(f"bernoulli: expected p in [0, 1], got {p}")
    elif not input.dtype.is_floating_point:
        raise TypeError(f"bernoulli: expected a floating point tensor of probabilities, got {input.dtype}")
    else:
        _check_probabilities("bernoulli", input)
    with no_grad():
        probs = input.detach() if p is None else float(p)
        u = _draws("uniform", tuple(input.shape), _C.dtype.float64 if input.dtype == _C.dtype.float64
                   else _C.dtype.float32, input.device, generator)
        draws = (u < probs).to(input.dtype)
    return _zero_gradient(draws, input)


def bernoulli_(self: Tensor, p=0.5, *, generator=None) -> Tensor:
    """Fills ``self`` with 0 or 1, 1 with probability ``p`` (a float, or a tensor
    broadcast to ``self``)."""
    from .inplace import _check_writable, _in_graph, _write
    if isinstance(p, Tensor):
        if not p.dtype.is_floating_point:
            raise TypeError(f"bernoulli_: expected a floating point tensor of probabilities, got {p.dtype}")
        _check_probabilities("bernoulli_", p)
        probs = p.detach().to(self.device).expand(self.shape)
    else:
        probs = p
    _check_writable(self, "bernoulli_", _in_graph(self, ()))
    draws = bernoulli(probs if isinstance(probs, Tensor) else self.detach(), None if isinstance(probs, Tensor)
                      else probs, generator=generator)
    if _in_graph(self, ()):
        return self.copy_(draws)  # recorded: the old values get a zero gradient
    return _write(self, draws.to(self.dtype), "bernoulli_")


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           requires_grad: bool = False) -> Tensor:
    """Normal samples with the given means and standard deviations: tensors (broadcast
    together; one sample per element), or two numbers and a ``size``. Its gradient with
    respect to ``mean`` and ``std`` is zero, as PyTorch's (sample ``mean + std * randn`` for
    a reparameterized draw).

    >>> minitorch.normal(0.0, 1.0, (2, 3)).shape
    (2, 3)
    """
    from .. import broadcast_shapes, no_grad
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    for name, v in (("mean", mean), ("std", std)):
        if not isinstance(v, Tensor) and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise TypeError(f"normal(): argument '{name}' must be a Tensor or a float, not {type(v).__name__}")
    if isinstance(std, Tensor):
        if not std.dtype.is_floating_point:
            raise TypeError(f"normal: expected a floating point std, got {std.dtype}")
        if std.numel():
            with no_grad():
                low = std.min().item()  # waits for a GPU, as PyTorch's check does
            if not low >= 0:
                raise _C.InputError(f"normal expects all elements of std >= 0.0, found {low}")
    elif std < 0:
        raise _C.InputError(f"normal expects std >= 0.0, but found std {std}")
    if tensors:
        if size is not None:
            raise TypeError("normal(): 'size' is taken only with a float mean and a float std")
        if isinstance(mean, Tensor) and not mean.dtype.is_floating_point:
            raise TypeError(f"normal: expected a floating point mean, got {mean.dtype}")
        if len(tensors) == 2 and mean.device != std.device:
            raise RuntimeError(f"normal: mean is on {mean.device} and std on {std.device}")
        shape = broadcast_shapes(*(t.shape for t in tensors))
        dt = _float_dtype(*tensors)
        with no_grad():
            z = _draws("normal", tuple(shape), dt, tensors[0].device, generator)
            m = mean.detach() if isinstance(mean, Tensor) else mean
            s = std.detach() if isinstance(std, Tensor) else std
            sample = z * s + m
        return _zero_gradient(sample, *tensors)
    if size is None:
        raise TypeError("normal(): with a float mean and std, give the 'size' of the result")
    from .creation import _size
    shape = tuple(_size((size,), "normal"))
    dt = _float_dtype() if dtype is None else dtype
    out = _draws("normal", shape, dt, device, generator) * std + mean
    return out.requires_grad_() if requires_grad else out
