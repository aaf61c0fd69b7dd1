"""``Rprop`` (Riedmiller & Braun's resilient backpropagation, with PyTorch's update rule)."""
from __future__ import annotations

from .. import _C
from ..ops.creation import full_like, zeros_like
from ._helpers import ParameterwiseOptimizer, check_hyper, check_options


class Rprop(ParameterwiseOptimizer):
    """Moves each element by its own step size in the direction opposite its gradient's sign;
    only signs are used. Per element, with ``s = sign(g * g_prev)``:

    ``s > 0``: ``step_size = min(step_size * etaplus, max)``; ``s < 0``: ``step_size =
    max(step_size * etaminus, min)`` and the gradient counts as 0 for this step (no move, and
    no sign to compare with next step); then ``p -= sign(g) * step_size``, ``g_prev = g``.

    Step sizes start at ``lr``; ``step_sizes=(min, max)``; ``maximize=True`` ascends. State
    per parameter (PyTorch's keys): ``step``, ``prev``, ``step_size``. The step is written
    with tensor ops whatever ``foreach`` says; ``capturable`` is accepted for PyTorch's signature.
    """

    def __init__(self, params, lr: float = 1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable: bool = False, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False):
        check_hyper(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        check_options("Rprop", differentiable=differentiable)
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    @staticmethod
    def _new_state(p, g: dict) -> dict:
        return {"step": 0, "prev": zeros_like(p), "step_size": full_like(p.grad, g["lr"])}

    def _update(self, g: dict, p, state: dict) -> None:
        (etaminus, etaplus), (size_min, size_max) = g["etas"], g["step_sizes"]
        grad = -p.grad if g["maximize"] else p.grad
        state["step"] += 1
        prev, step_size = state["prev"], state["step_size"]
        # Each element's step-size factor: etaplus where the gradient kept its sign, etaminus
        # where it flipped, 1 where either is 0 (a NaN stays NaN, as in PyTorch).
        sign = grad.mul(prev).sign()
        flipped = sign.lt(0)
        factor = _C.where(sign.gt(0), etaplus, _C.where(flipped, etaminus, _C.where(sign.eq(0), 1.0, sign)))
        step_size.mul_(factor).clamp_(size_min, size_max)
        grad = _C.where(flipped, 0.0, grad)  # a flipped sign: no move now, and none to compare with next
        p.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)
