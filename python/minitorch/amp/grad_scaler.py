"""``GradScaler``: dynamic loss scaling, PyTorch's ``torch.amp.GradScaler``.

A float16 number below 6e-8 is zero. Gradients of a network trained in float16 often are
that small, so they vanish. The cure: multiply the loss by a large scale S (2**16 to start)
before backward, so every gradient is S times larger and stays representable; divide
the gradients by S again before the optimizer uses them. If S was too large, some
gradient overflows to inf: that step is skipped and S is halved. After
``growth_interval`` steps in a row without overflow, S is doubled again.

    scaler = minitorch.amp.GradScaler("cuda")
    for x, y in loader:
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()   # backward of S * loss
        scaler.unscale_(opt)            # optional: to clip the true gradients first
        scaler.step(opt)                # unscales (if not done yet); skips the step on inf/NaN
        scaler.update()                 # S *= backoff_factor after a skip, growth_factor after
                                        # growth_interval good steps

Unscaling is one kernel launch per gradient: it multiplies the gradient by 1/S in place and
raises a flag on the device where any element is inf or NaN (``_amp_foreach_non_finite_
check_and_unscale_``). The host reads the flag once per step, in ``step``.

The scale is kept as a float32 value, as PyTorch keeps it in a float32 tensor: growing
it past float32's range is refused the same way (the scale stays).
"""
from __future__ import annotations

import math
import warnings
from enum import Enum

import numpy as np

from .. import _C


class _Stage(Enum):
    READY = 0      # nothing done since the last update()
    UNSCALED = 1   # unscale_ ran: the grads are the true gradients
    STEPPED = 2    # step ran (or was skipped)


def _new_state() -> dict:
    return {"stage": _Stage.READY, "found_inf_per_device": {}}


def _f32(x: float) -> float:
    """x rounded to float32 (inf past its range)."""
    with np.errstate(over="ignore"):
        return float(np.float32(x))


class GradScaler:
    """``GradScaler(device="cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
    growth_interval=2000, enabled=True)``. With ``device="cuda"`` and no CUDA device it warns
    and disables itself (every method then passes its arguments through), as PyTorch's does."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        if not isinstance(device, str) or device not in ("cuda", "cpu"):
            raise ValueError(f"GradScaler: device must be 'cuda' or 'cpu', got {device!r}")
        from .. import cuda

        if enabled and device == "cuda" and not cuda.is_available():
            warnings.warn("minitorch.amp.GradScaler is enabled, but CUDA is not available. Disabling.", stacklevel=2)
            enabled = False
        self._device = device
        self._enabled = bool(enabled)
        if self._enabled:
            if not growth_factor > 1.0:
                raise ValueError(f"GradScaler: the growth factor must be > 1.0, got {growth_factor}")
            if not backoff_factor < 1.0:
                raise ValueError(f"GradScaler: the backoff factor must be < 1.0, got {backoff_factor}")
            if not isinstance(growth_interval, int) or isinstance(growth_interval, bool) or growth_interval <= 0:
                raise ValueError(f"GradScaler: growth_interval must be a positive int, got {growth_interval!r}")
        self._init_scale = float(init_scale)
        self._scale: float | None = None  # set by the first scale() (PyTorch: lazily, on the loss's device)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        self._growth_tracker = 0
        self._per_optimizer_states: dict[int, dict] = {}

    # ---- scaling the loss ---------------------------------------------------------------
    def scale(self, outputs):
        """``outputs * scale``: a tensor, or tensors nested in lists / tuples (same structure back)."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, _C.Tensor):
            if self._scale is None:
                self._scale = _f32(self._init_scale)
                self._growth_tracker = self._init_growth_tracker
            return outputs * self._scale
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("GradScaler.scale: outputs must be a Tensor or an iterable of Tensors, "
                         f"got {type(outputs).__name__}")

    # ---- unscaling and stepping ---------------------------------------------------------
    def _state(self, optimizer) -> dict:
        return self._per_optimizer_states.setdefault(id(optimizer), _new_state())

    def _check_scale(self, fn: str) -> None:
        # PyTorch asserts these two (AssertionError), so minitorch raises the same type.
        if self._scale is None:
            raise AssertionError(f"Attempted {fn} but the scale is None: this may mean that no loss was scaled "
                                 "with this scaler earlier in the iteration (scaler.scale(loss).backward()).")

    def unscale_(self, optimizer) -> None:
        """Divides the optimizer's gradients by the scale, in place, and records whether any
        is inf or NaN. At most once per optimizer between two ``update()`` calls."""
        if not self._enabled:
            return
        self._check_scale("unscale_")
        state = self._state(optimizer)
        if state["stage"] is _Stage.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is _Stage.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = _f32(1.0 / self._scale)
        by_device: dict[str, list] = {}
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.grad.dtype == _C.dtype.float16:  # PyTorch's rule: keep float32 master weights
                    raise ValueError("Attempting to unscale FP16 gradients.")
                by_device.setdefault(str(p.grad.device), []).append(p.grad)
        from .. import full, zeros, float32

        found = {}
        for device, grads in by_device.items():
            found_inf = zeros(1, dtype=float32, device=device)
            inv = full((1,), inv_scale, dtype=float32, device=device)
            _C._amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv)
            found[device] = found_inf
        state["found_inf_per_device"] = found
        state.pop("found_inf", None)  # not read yet (_found_inf)
        state["stage"] = _Stage.UNSCALED

    def _found_inf(self, state: dict) -> bool:
        """Whether unscale_ met inf or NaN: read from the device once (the host waits for the
        GPU there), then kept, so step() and update() wait once an iteration between them, as
        PyTorch's do."""
        if "found_inf" not in state:
            state["found_inf"] = any(f.item() != 0 for f in state["found_inf_per_device"].values())
        return state["found_inf"]

    def step(self, optimizer, *args, **kwargs):
        """Unscales the gradients (unless ``unscale_`` did), then runs ``optimizer.step(*args,
        **kwargs)`` only if none is inf or NaN. Returns what step returned, or None when skipped."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale("step")
        state = self._state(optimizer)
        if state["stage"] is _Stage.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is _Stage.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")  # it has no gradients
        retval = None
        if not self._found_inf(state):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = _Stage.STEPPED
        return retval

    def update(self, new_scale=None) -> None:
        """Adapts the scale after the step(s) of this iteration: ``backoff_factor`` times after an
        overflow (and the growth count restarts), ``growth_factor`` times after
        ``growth_interval`` clean steps in a row. ``new_scale`` (a float or a one-element
        float32 tensor) sets it directly instead."""
        if not self._enabled:
            return
        self._check_scale("update")
        if new_scale is not None:
            if isinstance(new_scale, _C.Tensor):
                if new_scale.numel() != 1 or new_scale.dtype.name != "float32" or new_scale.requires_grad:
                    raise ValueError("new_scale should be a float or a 1-element float32 tensor with "
                                     "requires_grad=False.")
                self._scale = _f32(new_scale.item())
            elif isinstance(new_scale, (int, float)) and not isinstance(new_scale, bool):
                self._scale = _f32(new_scale)
            else:
                raise TypeError(f"GradScaler.update: new_scale must be a float or a tensor, got {type(new_scale).__name__}")
        else:
            found_inf = [self._found_inf(s) for s in self._per_optimizer_states.values()
                         if s["stage"] is not _Stage.READY]
            if not found_inf:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found_inf):
                self._scale = _f32(self._scale * self._backoff_factor)
                self._growth_tracker = 0
            else:
                successful = self._growth_tracker + 1
                if successful == self._growth_interval:
                    grown = _f32(self._scale * self._growth_factor)
                    if math.isfinite(grown):  # past float32's range the scale stays
                        self._scale = grown
                    self._growth_tracker = 0
                else:
                    self._growth_tracker = successful
        self._per_optimizer_states = {}

    # ---- the settings -------------------------------------------------------------------
    def get_scale(self) -> float:
        """The current scale (``init_scale`` before the first ``scale()``; 1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def is_enabled(self) -> bool:
        return self._enabled

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._scale is None else self._growth_tracker

    def state_dict(self) -> dict:
        """``scale``, ``growth_factor``, ``backoff_factor``, ``growth_interval`` and
        ``_growth_tracker``, as PyTorch's; an empty dict when disabled."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        missing = {"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"} - set(state_dict)
        if missing:
            raise KeyError(f"GradScaler.load_state_dict: missing keys {sorted(missing)}")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale = _f32(self._init_scale)
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._scale is not None:
            self._growth_tracker = self._init_growth_tracker

    def __repr__(self) -> str:
        return (f"GradScaler(device={self._device!r}, scale={self.get_scale()}, enabled={self._enabled}, "
                f"growth_factor={self._growth_factor}, backoff_factor={self._backoff_factor}, "
                f"growth_interval={self._growth_interval})")
