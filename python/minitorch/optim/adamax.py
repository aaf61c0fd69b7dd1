"""``Adamax`` (Kingma & Ba's infinity-norm variant of Adam, with PyTorch's update rule)."""
from __future__ import annotations

from .. import _C
from ..ops.creation import zeros_like
from ._helpers import ParameterwiseOptimizer, check_hyper, check_options, step_gradient


class Adamax(ParameterwiseOptimizer):
    """Adam with the second moment replaced by an exponentially weighted infinity norm:

    ``m = b1 m + (1 - b1) g``; ``u = max(b2 u, |g| + eps)``; ``p -= lr / (1 - b1^t) * m / u``.

    ``weight_decay`` adds ``wd * p`` to the gradient, ``maximize=True`` ascends. State per
    parameter (PyTorch's keys): ``step``, ``exp_avg``, ``exp_inf``. The step is written with
    tensor ops whatever ``foreach`` says; ``capturable`` is accepted for PyTorch's signature
    (the step count is a Python number: nothing to capture).
    """

    def __init__(self, params, lr: float = 2e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0,
                 foreach: bool | None = None, *, maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False):
        check_hyper(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        check_options("Adamax", differentiable=differentiable)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    @staticmethod
    def _new_state(p, g: dict) -> dict:
        return {"step": 0, "exp_avg": zeros_like(p), "exp_inf": zeros_like(p)}

    def _update(self, g: dict, p, state: dict) -> None:
        lr, (b1, b2), eps = g["lr"], g["betas"], g["eps"]
        grad = step_gradient(g, p, state)
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        exp_avg.lerp_(grad, 1 - b1)
        exp_inf.mul_(b2)
        exp_inf.copy_(_C.maximum(exp_inf, grad.abs().add_(eps)))
        clr = lr / (1 - b1 ** state["step"])
        p.addcdiv_(exp_avg, exp_inf, value=-clr)
