"""``RAdam`` (Liu et al.'s rectified Adam, with PyTorch's update rule and state)."""
from __future__ import annotations

from ..ops.creation import zeros_like
from ._helpers import ParameterwiseOptimizer, check_hyper, check_options, step_gradient


class RAdam(ParameterwiseOptimizer):
    """Adam whose adaptive step is switched on, and scaled by a rectification term, once the
    variance of the adaptive learning rate is tractable:

    ``m = b1 m + (1 - b1) g``, ``v = b2 v + (1 - b2) g^2``, ``m_hat = m / (1 - b1^t)``,
    ``rho_inf = 2 / (1 - b2) - 1``, ``rho_t = rho_inf - 2 t b2^t / (1 - b2^t)``. When
    ``rho_t > 5``: ``p -= lr * m_hat * r_t * sqrt(1 - b2^t) / (sqrt(v) + eps)`` with
    ``r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))``;
    otherwise ``p -= lr * m_hat`` (SGD with momentum).

    ``weight_decay`` adds ``wd * p`` to the gradient, or with ``decoupled_weight_decay=True``
    (RAdamW) decays ``p *= 1 - lr * wd``; ``maximize=True`` ascends. State per parameter
    (PyTorch's keys): ``step``, ``exp_avg``, ``exp_avg_sq``. The step is written with tensor
    ops whatever ``foreach`` says; ``capturable`` is accepted for PyTorch's signature.
    """

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False):
        check_hyper(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        check_options("RAdam", differentiable=differentiable)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable))

    @staticmethod
    def _new_state(p, g: dict) -> dict:
        return {"step": 0, "exp_avg": zeros_like(p), "exp_avg_sq": zeros_like(p)}

    def _update(self, g: dict, p, state: dict) -> None:
        lr, (b1, b2), eps = g["lr"], g["betas"], g["eps"]
        grad = step_gradient(g, p, state, decoupled=g["decoupled_weight_decay"])
        t = state["step"]
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.lerp_(grad, 1 - b1)
        exp_avg_sq.mul_(b2).addcmul_(grad, grad, value=1 - b2)
        bias_correction1, bias_correction2 = 1 - b1 ** t, 1 - b2 ** t
        m_hat = exp_avg / bias_correction1
        rho_inf = 2 / (1 - b2) - 1
        rho_t = rho_inf - 2 * t * b2 ** t / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive = bias_correction2 ** 0.5 / exp_avg_sq.sqrt().add_(eps)
            p.sub_(m_hat * lr * adaptive * rect)
        else:
            p.sub_(m_hat * lr)
