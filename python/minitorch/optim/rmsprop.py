"""``RMSprop`` (Hinton's lecture 6e, with PyTorch's update rule and defaults)."""
from __future__ import annotations

from ..ops.creation import zeros_like
from ..autograd import no_grad
from .optimizer import Optimizer


class RMSprop(Optimizer):
    """Divides each gradient by a running root mean square of past gradients:

    ``v = alpha v + (1 - alpha) g^2``; ``p -= lr * g / (sqrt(v) + eps)``.

    ``weight_decay`` adds ``wd * p`` to the gradient; ``centered`` subtracts the square of
    the running mean gradient ``m = alpha m + (1 - alpha) g`` from ``v`` (an estimate of the
    variance); ``momentum`` accumulates ``buf = momentum buf + g / (sqrt(v) + eps)`` and
    steps ``p -= lr * buf``. State per parameter: ``step``, ``square_avg``, and
    ``momentum_buffer`` / ``grad_avg`` when those options are on (PyTorch's keys).

    Each step is a few in-place tensor ops (there is no fused kernel for RMSprop).
    """

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8, weight_decay: float = 0,
                 momentum: float = 0, centered: bool = False, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if alpha < 0.0:
            raise ValueError(f"Invalid alpha value: {alpha}")
        if differentiable:
            raise NotImplementedError("RMSprop: differentiable=True is not supported in minitorch")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                                      centered=centered, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable))

    @no_grad()
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for g in self.param_groups:
            lr, alpha, eps, wd = g["lr"], g["alpha"], g["eps"], g["weight_decay"]
            momentum, centered = g["momentum"], g["centered"]
            for p in g["params"]:
                if p.grad is None:
                    continue
                grad = -p.grad if g["maximize"] else p.grad
                state = self.state.setdefault(id(p), {})
                if not state:
                    state["step"] = 0
                    state["square_avg"] = zeros_like(p)
                    if momentum > 0:
                        state["momentum_buffer"] = zeros_like(p)
                    if centered:
                        state["grad_avg"] = zeros_like(p)
                state["step"] += 1
                if wd != 0:
                    grad = grad + p * wd
                square_avg = state["square_avg"]
                square_avg.mul_(alpha).add_(grad * grad, alpha=1 - alpha)
                if centered:
                    grad_avg = state["grad_avg"]
                    grad_avg.mul_(alpha).add_(grad, alpha=1 - alpha)
                    avg = (square_avg - grad_avg * grad_avg).sqrt_()
                else:
                    avg = square_avg.sqrt()
                avg.add_(eps)
                if momentum > 0:
                    buf = state["momentum_buffer"]
                    buf.mul_(momentum).add_(grad / avg)
                    p.sub_(buf, alpha=lr)
                else:
                    p.sub_(grad / avg, alpha=lr)
        return loss
