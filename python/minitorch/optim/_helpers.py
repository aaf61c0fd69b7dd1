"""Helpers shared by the optimizers whose step is written with tensor ops only (Adagrad,
Adamax, NAdam, RAdam, Adadelta, Rprop, ASGD, LBFGS): option checks, the parameters a step
updates, and PyTorch's rounding of scalar state."""
from __future__ import annotations

import struct

from .. import _C
from ..autograd import no_grad
from .optimizer import Optimizer


def check_options(name: str, *, differentiable: bool = False, foreach=None, fused=None) -> None:
    """Refuses what minitorch cannot do: ``differentiable=True`` (a step that autograd records)
    and, as PyTorch does, ``fused`` together with ``foreach``."""
    if differentiable:
        raise NotImplementedError(f"{name}: differentiable=True is not supported in minitorch")
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def check_hyper(*, lr=None, eps=None, betas=None, weight_decay=None) -> None:
    """PyTorch's ValueErrors for the hyper-parameters the optimizers share (None: not taken)."""
    if lr is not None and lr < 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")
    if eps is not None and eps < 0.0:
        raise ValueError(f"Invalid epsilon value: {eps}")
    for i, beta in enumerate(betas or ()):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
    if weight_decay is not None and weight_decay < 0.0:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def param_states(optimizer, name: str, group: dict):
    """(parameter, its state) for each parameter of ``group`` that has a gradient (all checked
    first); a parameter's state is ``optimizer._new_state(p, group)`` at its first step."""
    for p in params_with_grad(name, group):
        state = optimizer.state.get(id(p))
        if not state:
            state = optimizer.state[id(p)] = optimizer._new_state(p, group)
        yield p, state


def step_gradient(g: dict, p, state: dict, decoupled: bool = False):
    """Counts p's step and returns the gradient it uses: negated under ``maximize``, plus
    ``weight_decay * p`` (L2), or, ``decoupled``, p itself shrunk by ``1 - lr * weight_decay``
    instead (AdamW's form)."""
    grad = -p.grad if g["maximize"] else p.grad
    state["step"] += 1
    wd = g.get("weight_decay", 0)
    if wd != 0:
        if decoupled:
            p.mul_(1 - g["lr"] * wd)
        else:
            grad = grad.add(p, alpha=wd)
    return grad


def params_with_grad(name: str, group: dict) -> list:
    """The parameters of ``group`` that have a gradient (the others are skipped, as in PyTorch),
    each checked to be floating point before any of them changes."""
    params = [p for p in group["params"] if p.grad is not None]
    for p in params:
        if not p.dtype.is_floating_point:
            raise RuntimeError(f"{name} optimizes floating point parameters only, but a parameter "
                               f"with a gradient has dtype {p.dtype}")
    return params


def scalar_state(x: float) -> float:
    """``x`` rounded as PyTorch stores a scalar of optimizer state (NAdam's ``mu_product``, ASGD's
    ``eta`` and ``mu``): a 0-dim tensor of float32, or of float64 when the default dtype is
    float64. minitorch keeps such scalars as Python floats, rounded the same way, so that its
    steps compute with the very numbers PyTorch's do."""
    if _C._get_default_dtype() == _C.dtype.float64:
        return float(x)
    return struct.unpack("f", struct.pack("f", float(x)))[0]


class ParameterwiseOptimizer(Optimizer):
    """An optimizer whose step updates each parameter on its own with tensor ops: ``step()``
    calls ``self._update(group, p, state)`` for every parameter with a gradient, its state
    made by ``self._new_state(p, group)`` at its first step."""

    @no_grad()
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for g in self.param_groups:
            for p, state in param_states(self, type(self).__name__, g):
                self._update(g, p, state)
        return loss

    @staticmethod
    def _new_state(p, g: dict) -> dict:
        raise NotImplementedError

    def _update(self, g: dict, p, state: dict) -> None:
        raise NotImplementedError
