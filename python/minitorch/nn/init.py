"""``minitorch.nn.init``: in-place initialisation of parameters (PyTorch's formulas)."""
from __future__ import annotations

import math
import warnings

from .. import _C
from ..autograd import no_grad


def _fans(t):
    if t.dim() < 2:
        raise ValueError(f"fan in and fan out can not be computed for a tensor with fewer than 2 dimensions "
                         f"(shape {tuple(t.shape)})")
    receptive = 1
    for s in tuple(t.shape)[2:]:
        receptive *= s
    return t.shape[1] * receptive, t.shape[0] * receptive


def calculate_gain(nonlinearity: str, param=None) -> float:
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                        "conv_transpose3d", "sigmoid"):
        return 1.0
    if nonlinearity == "selu":
        return 3.0 / 4
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope**2))
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def uniform_(tensor, a: float = 0.0, b: float = 1.0):
    with no_grad():
        r = _C._rand(tuple(tensor.shape), tensor.dtype, tensor.device)
        return tensor.copy_(r * (b - a) + a)


def normal_(tensor, mean: float = 0.0, std: float = 1.0):
    with no_grad():
        r = _C._randn(tuple(tensor.shape), tensor.dtype, tensor.device)
        return tensor.copy_(r * std + mean)


def constant_(tensor, val: float):
    with no_grad():
        return tensor.fill_(val)


def zeros_(tensor):
    return constant_(tensor, 0.0)


def ones_(tensor):
    return constant_(tensor, 1.0)


def xavier_uniform_(tensor, gain: float = 1.0):
    fan_in, fan_out = _fans(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor, gain: float = 1.0):
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def kaiming_uniform_(tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"):
    fan_in, fan_out = _fans(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"):
    fan_in, fan_out = _fans(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan))


def trunc_normal_(tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0, generator=None):
    """Normal samples of ``mean`` and ``std`` kept to ``[a, b]`` (the bounds are absolute,
    as PyTorch's), drawn without rejection: uniforms between the normal CDF's values at a
    and b, mapped back through the inverse CDF, ``mean + std * sqrt(2) * erfinv(2u - 1)``
    (one ``erfinv`` kernel), then clamped against rounding at the ends."""
    if std < 0:
        raise ValueError(f"trunc_normal_: std must be >= 0, got {std}")
    if not a < b:
        raise ValueError(f"trunc_normal_: expected a < b, got a={a} and b={b}")

    def cdf(x):  # of the standard normal
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    lo, hi = 2 * cdf((a - mean) / std) - 1 if std else -1.0, 2 * cdf((b - mean) / std) - 1 if std else 1.0
    with no_grad():
        work = _C.dtype.float64 if tensor.dtype == _C.dtype.float64 else _C.dtype.float32
        if generator is not None:
            from ..ops.sampling import _draws
            u = _draws("uniform", tuple(tensor.shape), work, tensor.device, generator)
        else:
            u = _C._rand(tuple(tensor.shape), work, tensor.device)
        z = (u * (hi - lo) + lo).erfinv() * (std * math.sqrt(2.0)) + mean
        return tensor.copy_(z.clamp(min=a, max=b))


def orthogonal_(tensor, gain: float = 1.0, generator=None):
    """A (semi-)orthogonal matrix, scaled by ``gain``, for a tensor of 2 or more dims (the
    dims after the first flattened): the Q of a normal matrix's QR factorization, its
    columns' signs fixed by R's diagonal so that Q is uniformly distributed (PyTorch's)."""
    if tensor.dim() < 2:
        raise ValueError(f"orthogonal_: only tensors with 2 or more dimensions are supported, got shape "
                         f"{tuple(tensor.shape)}")
    if tensor.numel() == 0:
        return tensor
    from .. import linalg
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    with no_grad():
        if generator is not None:
            from ..ops.sampling import _draws
            flat = _draws("normal", (rows, cols), _C.dtype.float64, "cpu", generator)
        else:
            flat = _C._randn((rows, cols), _C.dtype.float64, _C.device("cpu"))
        if rows < cols:
            flat = flat.t()
        q, r = linalg.qr(flat)
        q = q * r.diagonal().sign()
        if rows < cols:
            q = q.t()
        return tensor.copy_((q * gain).reshape(tuple(tensor.shape)).to(tensor.device, tensor.dtype))


def eye_(tensor):
    """The identity matrix in a 2-D tensor (ones on the main diagonal of a rectangle)."""
    if tensor.dim() != 2:
        raise ValueError(f"eye_: only 2-D tensors are supported, got shape {tuple(tensor.shape)}")
    with no_grad():
        return tensor.copy_(_C._eye(tensor.shape[0], tensor.shape[1], tensor.dtype, tensor.device))


def dirac_(tensor, groups: int = 1):
    """A convolution weight (3-D, 4-D or 5-D) that passes its input through: in each of
    ``groups`` groups, output channel i takes input channel i at the kernel's centre."""
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError(f"dirac_: only 3, 4 or 5-D tensors are supported, got shape {tuple(tensor.shape)}")
    out_per_group, rem = divmod(tensor.shape[0], groups)
    if groups < 1 or rem:
        raise ValueError(f"dirac_: dim 0 ({tensor.shape[0]}) must be divisible by groups ({groups})")
    keep = min(out_per_group, tensor.shape[1])
    with no_grad():
        tensor.zero_()
        centre = tuple(s // 2 for s in tuple(tensor.shape)[2:])
        for g in range(groups):
            for d in range(keep):
                tensor[(g * out_per_group + d, d) + centre] = 1
        return tensor


def sparse_(tensor, sparsity: float, std: float = 0.01, generator=None):
    """A 2-D tensor of normal values (``std``) with the fraction ``sparsity`` of each
    column's entries set to zero, at random rows."""
    if tensor.dim() != 2:
        raise ValueError(f"sparse_: only 2-D tensors are supported, got shape {tuple(tensor.shape)}")
    if not 0 <= sparsity <= 1:
        raise ValueError(f"sparse_: sparsity must be in [0, 1], got {sparsity}")
    from .. import randperm
    rows, cols = tuple(tensor.shape)
    zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        normal_(tensor, 0.0, std)
        for c in range(cols):
            drop = randperm(rows, generator=generator, device=tensor.device)[:zeros]
            tensor[drop, c] = 0
        return tensor


def _deprecated(new):
    """PyTorch's old names without the trailing underscore: the same fill, with a FutureWarning."""
    old = new.__name__.rstrip("_")

    def fill(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`.", FutureWarning,
                      stacklevel=2)
        return new(*args, **kwargs)

    fill.__name__ = fill.__qualname__ = old
    fill.__doc__ = f"Deprecated: use :func:`{new.__name__}`."
    return fill


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
