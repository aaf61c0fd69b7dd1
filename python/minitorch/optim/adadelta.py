"""``Adadelta`` (Zeiler, with PyTorch's update rule, defaults and state)."""
from __future__ import annotations

from ..ops.creation import zeros_like
from ._helpers import ParameterwiseOptimizer, check_hyper, check_options, step_gradient


class Adadelta(ParameterwiseOptimizer):
    """Steps by the ratio of two running root mean squares, of past updates and of gradients:

    ``v = rho v + (1 - rho) g^2``; ``dx = sqrt(u + eps) / sqrt(v + eps) * g``;
    ``u = rho u + (1 - rho) dx^2``; ``p -= lr * dx``.

    ``weight_decay`` adds ``wd * p`` to the gradient, ``maximize=True`` ascends. State per
    parameter (PyTorch's keys): ``step``, ``square_avg`` (v), ``acc_delta`` (u). The step is
    written with tensor ops whatever ``foreach`` says; ``capturable`` is accepted for PyTorch's
    signature.
    """

    def __init__(self, params, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6, weight_decay: float = 0,
                 foreach: bool | None = None, *, capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False):
        check_hyper(lr=lr, eps=eps, weight_decay=weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_options("Adadelta", differentiable=differentiable)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      capturable=capturable, foreach=foreach, differentiable=differentiable))

    @staticmethod
    def _new_state(p, g: dict) -> dict:
        return {"step": 0, "square_avg": zeros_like(p), "acc_delta": zeros_like(p)}

    def _update(self, g: dict, p, state: dict) -> None:
        lr, rho, eps = g["lr"], g["rho"], g["eps"]
        grad = step_gradient(g, p, state)
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        p.add_(delta, alpha=-lr)
