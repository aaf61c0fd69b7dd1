"""``Adam`` and ``AdamW`` (Kingma & Ba, with PyTorch's bias correction and defaults)."""
from __future__ import annotations

from .. import _C
from ..ops.creation import zeros_like
from ..autograd import no_grad
from .optimizer import Optimizer, _check_fused_args, _fused_buckets


class Adam(Optimizer):
    """``m = b1 m + (1-b1) g``, ``v = b2 v + (1-b2) g^2``,
    ``p -= lr * m_hat / (sqrt(v_hat) + eps)`` with bias-corrected ``m_hat, v_hat``.
    ``weight_decay`` adds ``wd * p`` to the gradient (L2); AdamW decays ``p`` directly.
    ``amsgrad=True`` divides by the running maximum of ``v_hat`` (Reddi et al.), and
    ``maximize=True`` ascends.

    By default each parameter takes one fused kernel pass (``fused``/``foreach`` as in
    PyTorch; see ``minitorch.optim.optimizer``); ``fused=False`` runs the same formulas
    as tensor ops (``_reference_step``)."""

    decoupled = False

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0.0,
                 amsgrad: bool = False, *, foreach: bool | None = None, maximize: bool = False,
                 fused: bool | None = None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
            raise ValueError(f"Invalid beta parameters: {betas}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_fused_args(foreach, fused)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, foreach=foreach, maximize=maximize, fused=fused))

    @no_grad()
    def step(self, closure=None):
        loss = self._evaluate(closure)
        for g in self.param_groups:
            def reference(p, g=g):
                self._reference_step(g, p, self._state(g, p))

            for params, grads in _fused_buckets(g, g["params"], reference):
                states = [self._state(g, p) for p in params]
                steps = {s["step"] for s in states}
                if len(steps) == 1:
                    self._fused_step(g, params, grads, states)
                    continue
                # Parameters whose step counts differ (one had no gradient for a while) get
                # different bias corrections: one multi-tensor step per step count.
                parts = [[i for i, s in enumerate(states) if s["step"] == t] for t in sorted(steps)]
                for part in parts:  # (split before any step: a step moves the counts)
                    self._fused_step(g, [params[i] for i in part], [grads[i] for i in part], [states[i] for i in part])
        return loss

    def _state(self, g: dict, p) -> dict:
        """p's state, made on its first step: the step count and the two moments."""
        state = self.state.get(id(p))
        if not state:
            state = self.state[id(p)] = {"step": 0, "exp_avg": zeros_like(p), "exp_avg_sq": zeros_like(p)}
        if g.get("amsgrad") and "max_exp_avg_sq" not in state:
            state["max_exp_avg_sq"] = zeros_like(p)
        return state

    def _fused_step(self, g: dict, params: list, grads: list, states: list) -> None:
        """One multi-tensor step over ``params`` (one device, dtype and step count)."""
        (b1, b2) = g["betas"]
        t = states[0]["step"] + 1
        amsgrad = bool(g.get("amsgrad"))
        _C._adam_step_foreach(params, grads, [s["exp_avg"] for s in states],
                              [s["exp_avg_sq"] for s in states], lr=g["lr"], beta1=b1, beta2=b2, eps=g["eps"],
                              weight_decay=g["weight_decay"], decoupled=self.decoupled, step=int(t),
                              max_exp_avg_sqs=[s["max_exp_avg_sq"] for s in states] if amsgrad else [],
                              amsgrad=amsgrad, maximize=bool(g.get("maximize")))
        for s in states:  # counted once the step has succeeded
            s["step"] = t

    def _reference_step(self, g: dict, p, state: dict) -> None:
        lr, (b1, b2), eps, wd = g["lr"], g["betas"], g["eps"], g["weight_decay"]
        grad = -p.grad if g.get("maximize") else p.grad
        if wd != 0:
            if self.decoupled:
                p.mul_(1 - lr * wd)
            else:
                grad = grad + p * wd
        state["step"] += 1
        t = state["step"]
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m.mul_(b1).add_(grad, alpha=1 - b1)
        v.mul_(b2).add_(grad * grad, alpha=1 - b2)
        step_size = lr / (1 - b1**t)
        if g.get("amsgrad"):
            vmax = state["max_exp_avg_sq"]
            vmax.copy_(_C.maximum(vmax, v))
            v = vmax
        denom = (v / (1 - b2**t)).sqrt() + eps
        p.sub_(m / denom, alpha=step_size)


class AdamW(Adam):
    """Adam with decoupled weight decay: ``p *= 1 - lr * weight_decay`` each step."""

    decoupled = True

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 1e-2,
                 amsgrad: bool = False, *, foreach: bool | None = None, maximize: bool = False,
                 fused: bool | None = None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         fused=fused)
