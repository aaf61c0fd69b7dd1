"""``NAdam`` (Dozat's Nesterov-accelerated Adam, with PyTorch's update rule and state)."""
from __future__ import annotations

from ..ops.creation import zeros_like
from ._helpers import ParameterwiseOptimizer, check_hyper, check_options, scalar_state, step_gradient


class NAdam(ParameterwiseOptimizer):
    """Adam with Nesterov momentum and a momentum schedule
    ``mu_t = b1 (1 - 0.5 * 0.96^(t * momentum_decay))``:

    ``m = b1 m + (1 - b1) g``, ``v = b2 v + (1 - b2) g^2``, ``d = sqrt(v / (1 - b2^t)) + eps``,
    ``p -= lr (1 - mu_t) / (1 - prod_t) * g / d + lr mu_{t+1} / (1 - prod_t mu_{t+1}) * m / d``
    where ``prod_t`` is the product ``mu_1 ... mu_t`` (state ``mu_product``).

    ``weight_decay`` adds ``wd * p`` to the gradient, or with ``decoupled_weight_decay=True``
    (NAdamW) decays ``p *= 1 - lr * wd``; ``maximize=True`` ascends. State per parameter
    (PyTorch's keys): ``step``, ``mu_product``, ``exp_avg``, ``exp_avg_sq``. ``mu_product`` is a
    Python float rounded like PyTorch's float32 0-dim tensor (see ``_helpers.scalar_state``).
    The step is written with tensor ops whatever ``foreach`` says; ``capturable`` is accepted
    for PyTorch's signature.
    """

    def __init__(self, params, lr: float = 2e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0,
                 momentum_decay: float = 4e-3, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False):
        check_hyper(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        if momentum_decay < 0.0:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        check_options("NAdam", differentiable=differentiable)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    @staticmethod
    def _new_state(p, g: dict) -> dict:
        return {"step": 0, "mu_product": 1.0, "exp_avg": zeros_like(p), "exp_avg_sq": zeros_like(p)}

    def _update(self, g: dict, p, state: dict) -> None:
        lr, (b1, b2), eps, psi = g["lr"], g["betas"], g["eps"], g["momentum_decay"]
        grad = step_gradient(g, p, state, decoupled=g["decoupled_weight_decay"])
        t = state["step"]
        mu = b1 * (1.0 - 0.5 * 0.96 ** (t * psi))
        mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * psi))
        # PyTorch multiplies its float32 mu_product tensor by mu taken to float32: one rounding.
        prod = state["mu_product"] = scalar_state(state["mu_product"] * scalar_state(mu))
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.lerp_(grad, 1 - b1)
        exp_avg_sq.mul_(b2).addcmul_(grad, grad, value=1 - b2)
        denom = exp_avg_sq.div(1 - b2 ** t).sqrt().add_(eps)
        p.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - prod))
        p.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - prod * mu_next))
