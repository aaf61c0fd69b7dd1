"""``SGD`` with momentum, dampening, Nesterov and weight decay (PyTorch's update rule)."""
from __future__ import annotations

from .. import _C
from ..autograd import no_grad
from .optimizer import Optimizer, _check_fused_args, _fused_buckets


class SGD(Optimizer):
    """``p -= lr * d``, where ``d`` is the gradient (plus ``weight_decay * p``), or with
    momentum the running ``buf = momentum * buf + (1 - dampening) * d`` (Nesterov:
    ``d + momentum * buf``). Updates are in place and record no graph.

    By default each parameter takes one fused kernel pass (``fused``/``foreach`` as in
    PyTorch; see ``minitorch.optim.optimizer``); ``fused=False`` runs the same formulas
    as tensor ops (``_reference_step``)."""

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, *, foreach: bool | None = None,
                 fused: bool | None = None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        _check_fused_args(foreach, fused)
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, foreach=foreach, fused=fused))

    @no_grad()
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for g in self.param_groups:
            for params, grads in _fused_buckets(g, g["params"], lambda p: self._reference_step(g, p)):
                self._fused_step(g, params, grads)
        return loss

    def _fused_step(self, g: dict, params: list, grads: list) -> None:
        """One multi-tensor step over ``params`` (one device and dtype) and their ``grads``."""
        momentum = g["momentum"]
        bufs = [self.state.get(id(p), {}).get("momentum_buffer") if momentum != 0 else None for p in params]
        bufs = _C._sgd_step_foreach(params, grads, bufs, lr=g["lr"], momentum=momentum,
                                    dampening=g["dampening"], weight_decay=g["weight_decay"], nesterov=g["nesterov"])
        for p, buf in zip(params, bufs):
            if buf is not None:
                self.state.setdefault(id(p), {})["momentum_buffer"] = buf

    def _reference_step(self, g: dict, p) -> None:
        lr, momentum, dampening, wd, nesterov = g["lr"], g["momentum"], g["dampening"], g["weight_decay"], g["nesterov"]
        d = p.grad
        if wd != 0:
            d = d + p * wd
        if momentum != 0:
            state = self.state.setdefault(id(p), {})
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = d.clone()
            else:
                buf.mul_(momentum).add_(d, alpha=1 - dampening)
            d = d + buf * momentum if nesterov else buf
        p.sub_(d, alpha=lr)
