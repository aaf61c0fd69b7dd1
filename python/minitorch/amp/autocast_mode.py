"""``minitorch.autocast``: mixed precision by op, PyTorch's ``torch.autocast``.

Inside ``with minitorch.autocast("cuda"):`` (float16 by default; ``"cpu"`` uses bfloat16),
the ops that gain the most from a 16-bit type and lose the least run in it, and the ops
that need float32's range or precision run in float32, whatever the dtypes of their inputs:

- lower precision: matmul (``@``), ``mm``, ``bmm``, ``baddbmm``, ``einsum``, ``F.linear``,
  ``F.conv1d`` / ``F.conv2d`` and ``F.scaled_dot_product_attention`` (so ``nn.Linear``,
  ``nn.Conv2d``, attention and the RNN layers' products);
- float32 on "cuda": ``exp``, ``log``, ``log1p``, ``expm1``, ``log2``, ``rsqrt``, ``reciprocal``,
  ``tan``, ``pow``, ``sum``, ``cumsum``, ``cumprod``, ``logsumexp``, ``norm``, softmax and
  log_softmax, layer and group norm, ``softplus``, ``cosine_similarity`` and the losses;
  on "cpu", as in PyTorch, only the losses (bfloat16 keeps float32's range);
- everything else runs in the dtype its inputs have, with the usual promotion (a float16
  matmul result plus a float32 bias gives float32).

Only floating tensors of the autocast device that are not float64 are cast; the casts are
ordinary differentiable ``to(dtype)`` ops, so gradients reach float32 parameters as float32.
An op runs whole under one rule: ops it calls inside see no autocast (as in PyTorch, where
autocast applies at the outermost op).

As in PyTorch, the 16-bit copy of each weight (a float32 leaf that requires grad: a
parameter) is made once per autocast region and reused by every op that reads it there,
so a layer called many times in one forward pass casts its weight once (``cache_enabled``,
on by default). The cache is dropped when the outermost region closes, and a weight
changed in place inside the region is cast again (the cache checks its version).
"""
from __future__ import annotations

import functools
import threading
import warnings

from .. import _C

_DEFAULT_DTYPE = {"cuda": "float16", "cpu": "bfloat16"}
_state = threading.local()  # .dtypes: {device type: the autocast dtype} while one is active
# Regions open in any thread. The listed ops are wrapped while at least one is open and
# restored when the last one closes, so code that never uses autocast pays nothing.
_open_regions = 0
_lock = threading.Lock()


def _active() -> dict:
    return getattr(_state, "dtypes", None) or {}


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is on for ``device_type`` in this thread."""
    return device_type in _active()


def get_autocast_dtype(device_type: str) -> _C.dtype:
    """The dtype autocast uses on ``device_type`` (its default when no region is active)."""
    dt = _active().get(device_type)
    return dt if dt is not None else getattr(_C.dtype, _DEFAULT_DTYPE[device_type])


class autocast:
    """``autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``: a context
    manager, or a decorator for a function (``@minitorch.autocast("cpu")``). ``dtype``:
    float16 or bfloat16 (default float16 on "cuda", bfloat16 on "cpu"); ``enabled=False``
    turns autocast off inside an enclosing region."""

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled=None):
        if device_type not in _DEFAULT_DTYPE:
            raise ValueError(f"autocast: device_type must be 'cuda' or 'cpu', got {device_type!r}")
        self.device_type = device_type
        self.fast_dtype = dtype if dtype is not None else getattr(_C.dtype, _DEFAULT_DTYPE[device_type])
        self._enabled = bool(enabled)
        if self._enabled and self.fast_dtype not in (_C.dtype.float16, _C.dtype.bfloat16):
            warnings.warn(f"In {device_type} autocast, but the target dtype {self.fast_dtype} is not supported "
                          "(float16 or bfloat16). Disabling autocast.", stacklevel=2)
            self._enabled = False
        if self._enabled and device_type == "cuda":
            from .. import cuda

            if not cuda.is_available():
                warnings.warn("User provided device_type of 'cuda', but CUDA is not available. Disabling",
                              stacklevel=2)
                self._enabled = False
        self._cache_enabled = True if cache_enabled is None else bool(cache_enabled)
        self._saved: list = []

    def __enter__(self):
        global _open_regions
        if self._enabled:  # a disabled region needs no wrappers: it only takes its device out
            with _lock:
                if _open_regions == 0:
                    _install()
                _open_regions += 1
        prev = _active()
        self._saved.append(getattr(_state, "dtypes", None))
        now = dict(prev)
        if self._enabled:
            now[self.device_type] = self.fast_dtype
        else:
            now.pop(self.device_type, None)
        _state.dtypes = now
        depth = getattr(_state, "depth", 0)
        if depth == 0:  # the outermost region of this thread owns the cast cache
            _state.cache = {} if self._cache_enabled else None
        _state.depth = depth + 1
        return self

    def __exit__(self, *exc):
        global _open_regions
        _state.dtypes = self._saved.pop()
        _state.depth -= 1
        if _state.depth == 0:
            _state.cache = None
        if self._enabled:
            with _lock:
                _open_regions -= 1
                if _open_regions == 0:
                    _uninstall()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            with autocast(self.device_type, self.fast_dtype, self._enabled):
                return fn(*args, **kwargs)
        return run


# ---- the op wrappers ------------------------------------------------------------------------

def _device_type(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, _C.Tensor):
            return a.device.type
        if isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, _C.Tensor):
                    return b.device.type
    return None


def _cast(x, device_type: str, dtype):
    """x with every eligible tensor in it cast to dtype: floating, not float64, on device_type."""
    if isinstance(x, _C.Tensor):
        if x.device.type == device_type and x.dtype.is_floating_point and x.dtype != _C.dtype.float64 \
                and x.dtype != dtype:
            return _cached_cast(x, dtype)
        return x
    if isinstance(x, (list, tuple)):
        return type(x)(_cast(v, device_type, dtype) for v in x)
    return x


def _cached_cast(x, dtype):
    """x.to(dtype), from the region's cache for a parameter cast to 16 bits (PyTorch caches
    exactly these: float32 leaves that require grad, cast to the lower precision)."""
    cache = getattr(_state, "cache", None)
    if cache is None or dtype == _C.dtype.float32 or x.dtype != _C.dtype.float32 \
            or not (x.is_leaf and x.requires_grad) or not _C.is_grad_enabled():
        return x.to(dtype)
    key = (id(x), dtype)
    hit = cache.get(key)
    if hit is not None and hit[0] is x and hit[1] == x._version:
        return hit[2]
    out = x.to(dtype)
    cache[key] = (x, x._version, out)  # holding x keeps its id from being reused
    return out


def _wrap(fn, policy: str, cpu_too: bool):
    """fn under autocast: policy "lower" casts to the autocast dtype, "fp32" to float32
    (unless the call gives dtype=); cpu_too: whether the rule also holds on the CPU."""
    @functools.wraps(fn)
    def op(*args, **kwargs):
        dtypes = _active()
        if not dtypes:
            return fn(*args, **kwargs)
        device_type = _device_type(args, kwargs)
        fast = dtypes.get(device_type)
        if fast is None or (device_type == "cpu" and not cpu_too) or (policy == "fp32" and kwargs.get("dtype")):
            return fn(*args, **kwargs)
        target = fast if policy == "lower" else _C.dtype.float32
        args = tuple(_cast(a, device_type, target) for a in args)
        kwargs = {k: _cast(v, device_type, target) for k, v in kwargs.items()}
        saved = _state.dtypes
        _state.dtypes = {}  # the op runs whole under one rule
        try:
            return fn(*args, **kwargs)
        finally:
            _state.dtypes = saved

    op._autocast_original = fn
    return op


@functools.lru_cache(maxsize=None)
def _op_lists():
    """(owner, name, policy, also on the CPU) for each form of each op that ops/declarations.py
    gives an autocast policy; owner is a module or the Tensor class. Computed once: the
    declarations do not change while the program runs."""
    from .. import _C as C
    from ..nn import functional as F
    from ..ops.registry import autocast_lists
    import minitorch

    owners = {"minitorch": minitorch, "Tensor": C.Tensor, "nn.functional": F}
    return tuple((owners[owner], name, policy, cpu_too) for owner, name, policy, cpu_too in autocast_lists())


_wrapped: list = []  # (owner, name, the original) while installed
# (owner, name) -> (the original, its wrapper). A training loop opens a region every step:
# making each wrapper once (functools.wraps copies several attributes) keeps the entry
# of a region to one setattr per op. A wrapper is made again if the op was replaced.
_made: dict = {}


def _install() -> None:
    """Puts the wrappers in place of the listed ops (a thread outside any region still
    gets the plain op: its wrapper finds no active dtype)."""
    for owner, name, policy, cpu_too in _op_lists():
        fn = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
        if fn is None or hasattr(fn, "_autocast_original"):
            continue
        made = _made.get((owner, name))
        if made is None or made[0] is not fn:
            made = _made[(owner, name)] = (fn, _wrap(fn, policy, cpu_too))
        _wrapped.append((owner, name, fn))
        setattr(owner, name, made[1])


def _uninstall() -> None:
    while _wrapped:
        owner, name, fn = _wrapped.pop()
        setattr(owner, name, fn)
