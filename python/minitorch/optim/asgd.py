"""``ASGD``: averaged stochastic gradient descent (Polyak & Juditsky), PyTorch's update rule."""
from __future__ import annotations

from ..ops.creation import zeros_like
from ._helpers import ParameterwiseOptimizer, check_hyper, check_options, scalar_state, step_gradient


class ASGD(ParameterwiseOptimizer):
    """SGD with a decaying step size and a running average of the iterates:

    ``p *= 1 - lambd * eta``; ``p -= eta * g``; ``ax += mu * (p - ax)`` (``ax = p`` while
    ``mu == 1``); then ``eta = lr / (1 + lambd * lr * t)^alpha`` and ``mu = 1 / max(1, t - t0)``,
    so averaging starts after ``t0`` steps. ``ax`` (state) is the averaged parameter.

    ``weight_decay`` adds ``wd * p`` to the gradient, ``maximize=True`` ascends. State per
    parameter (PyTorch's keys): ``step``, ``eta``, ``mu``, ``ax``; ``eta`` and ``mu`` are Python
    floats rounded like PyTorch's float32 0-dim tensors (see ``_helpers.scalar_state``). The
    step is written with tensor ops whatever ``foreach`` says; ``capturable`` is accepted for
    PyTorch's signature.
    """

    def __init__(self, params, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75, t0: float = 1e6,
                 weight_decay: float = 0, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False):
        check_hyper(lr=lr, weight_decay=weight_decay)
        if lambd < 0.0:
            raise ValueError(f"Invalid lambd value: {lambd}")
        if alpha < 0.0:
            raise ValueError(f"Invalid alpha value: {alpha}")
        check_options("ASGD", differentiable=differentiable)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    @staticmethod
    def _new_state(p, g: dict) -> dict:
        return {"step": 0, "eta": scalar_state(g["lr"]), "mu": 1.0, "ax": zeros_like(p)}

    def _update(self, g: dict, p, state: dict) -> None:
        lr, lambd, alpha, t0 = g["lr"], g["lambd"], g["alpha"], g["t0"]
        grad = step_gradient(g, p, state)
        t = state["step"]
        eta, mu, ax = state["eta"], state["mu"], state["ax"]
        p.mul_(1 - lambd * eta)
        p.add_(grad, alpha=-eta)
        if mu != 1:
            ax.add_(p.sub(ax).mul_(mu))
        else:
            ax.copy_(p)
        state["eta"] = scalar_state(lr / ((1 + lambd * lr * t) ** alpha))
        state["mu"] = scalar_state(1 / max(1, t - t0))
