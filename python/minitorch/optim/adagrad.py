"""``Adagrad`` (Duchi et al., with PyTorch's update rule, defaults and state)."""
from __future__ import annotations

from ..autograd import no_grad
from ..ops.creation import full_like
from ._helpers import check_hyper, check_options, params_with_grad, step_gradient
from .optimizer import Optimizer


class Adagrad(Optimizer):
    """Scales each step by the root of the running sum of squared gradients:

    ``sum += g^2``; ``p -= clr * g / (sqrt(sum) + eps)``, ``clr = lr / (1 + (t - 1) lr_decay)``.

    ``weight_decay`` adds ``wd * p`` to the gradient, ``maximize=True`` ascends. State per
    parameter (PyTorch's keys): ``step`` and ``sum``, made when the optimizer is built for every
    parameter (as PyTorch does; ``sum`` starts at ``initial_accumulator_value``), and on the
    first step for parameters of groups added later.

    The step is the tensor-op one whatever ``foreach`` / ``fused`` say (minitorch has no fused
    Adagrad kernel; ``fused=True`` still refuses a parameter that is not floating point, as
    PyTorch's does). minitorch has no sparse gradients.
    """

    def __init__(self, params, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, fused: bool | None = None):
        check_hyper(lr=lr, eps=eps, weight_decay=weight_decay)
        if lr_decay < 0.0:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if initial_accumulator_value < 0.0:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        check_options("Adagrad", differentiable=differentiable, foreach=foreach, fused=fused)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))
        for g in self.param_groups:
            for p in g["params"]:
                self._state(p)

    def _state(self, p) -> dict:
        """p's state: the step count and the sum of squared gradients. Like PyTorch, the sum
        starts from the optimizer's ``initial_accumulator_value``, not a group's."""
        state = self.state.get(id(p))
        if not state:
            state = self.state[id(p)] = {"step": 0,
                                         "sum": full_like(p, self.defaults["initial_accumulator_value"])}
        return state

    @no_grad()
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for g in self.param_groups:
            if g["fused"]:
                for p in g["params"]:
                    if p.grad is not None and not p.dtype.is_floating_point:
                        raise RuntimeError("`fused=True` requires all the params to be floating point Tensors, "
                                           f"but got {p.dtype}")
            for p in params_with_grad("Adagrad", g):
                self._update(g, p, self._state(p))
        return loss

    def _update(self, g: dict, p, state: dict) -> None:
        lr, lr_decay, eps = g["lr"], g["lr_decay"], g["eps"]
        grad = step_gradient(g, p, state)
        clr = lr / (1 + (state["step"] - 1) * lr_decay)
        total = state["sum"]
        total.addcmul_(grad, grad, value=1)
        p.addcdiv_(grad, total.sqrt().add_(eps), value=-clr)
