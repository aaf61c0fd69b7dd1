"""``RMSprop`` (Hinton's lecture 6e, with PyTorch's update rule and defaults)."""
from __future__ import annotations

from .. import _C
from ..ops.creation import zeros_like
from ..autograd import no_grad
from .optimizer import Optimizer, _fused_buckets


class RMSprop(Optimizer):
    """Divides each gradient by a running root mean square of past gradients:

    ``v = alpha v + (1 - alpha) g^2``; ``p -= lr * g / (sqrt(v) + eps)``.

    ``weight_decay`` adds ``wd * p`` to the gradient; ``centered`` subtracts the square of
    the running mean gradient ``m = alpha m + (1 - alpha) g`` from ``v`` (an estimate of the
    variance); ``momentum`` accumulates ``buf = momentum buf + g / (sqrt(v) + eps)`` and
    steps ``p -= lr * buf``. State per parameter: ``step``, ``square_avg``, and
    ``momentum_buffer`` / ``grad_avg`` when those options are on (PyTorch's keys).

    By default a step is one fused kernel pass per parameter, and on a GPU a few launches
    for all the parameters of a group (the multi-tensor step of ``minitorch.optim.optimizer``;
    formulas in ``optim_math.h``); ``foreach=False`` runs the same formulas as tensor ops
    (``_reference_step``). ``capturable`` is accepted for PyTorch's signature: minitorch's
    step count is a Python number, so there is nothing to capture.
    """

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8, weight_decay: float = 0,
                 momentum: float = 0, centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False):
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
                                      centered=centered, capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    @no_grad()
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for g in self.param_groups:
            def reference(p, g=g):
                self._reference_step(g, p, self._state(g, p))

            for params, grads in _fused_buckets(g, g["params"], reference):
                self._fused_step(g, params, grads, [self._state(g, p) for p in params])
        return loss

    def _state(self, g: dict, p) -> dict:
        """p's state, made on its first step (PyTorch's keys): the step count, square_avg,
        and momentum_buffer / grad_avg when the group uses them."""
        state = self.state.get(id(p))
        if not state:
            state = self.state[id(p)] = {"step": 0, "square_avg": zeros_like(p)}
        if g["momentum"] > 0 and "momentum_buffer" not in state:
            state["momentum_buffer"] = zeros_like(p)
        if g["centered"] and "grad_avg" not in state:
            state["grad_avg"] = zeros_like(p)
        return state

    def _fused_step(self, g: dict, params: list, grads: list, states: list) -> None:
        """One multi-tensor step over ``params`` (one device and dtype)."""
        momentum, centered = g["momentum"], g["centered"]
        _C._rmsprop_step_foreach(params, grads, [s["square_avg"] for s in states],
                                 [s["momentum_buffer"] for s in states] if momentum > 0 else [],
                                 [s["grad_avg"] for s in states] if centered else [],
                                 lr=g["lr"], alpha=g["alpha"], eps=g["eps"], weight_decay=g["weight_decay"],
                                 momentum=momentum, centered=centered, maximize=g["maximize"])
        for s in states:  # counted once the step has succeeded
            s["step"] += 1

    def _reference_step(self, g: dict, p, state: dict) -> None:
        lr, alpha, eps, wd = g["lr"], g["alpha"], g["eps"], g["weight_decay"]
        grad = -p.grad if g["maximize"] else p.grad
        state["step"] += 1
        if wd != 0:
            grad = grad + p * wd
        square_avg = state["square_avg"]
        square_avg.mul_(alpha).add_(grad * grad, alpha=1 - alpha)
        if g["centered"]:
            grad_avg = state["grad_avg"]
            grad_avg.lerp_(grad, 1 - alpha)
            avg = (square_avg - grad_avg * grad_avg).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg.add_(eps)
        if g["momentum"] > 0:
            buf = state["momentum_buffer"]
            buf.mul_(g["momentum"]).add_(grad / avg)
            p.sub_(buf, alpha=lr)
        else:
            p.sub_(grad / avg, alpha=lr)
