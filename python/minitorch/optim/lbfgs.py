"""``LBFGS``: limited-memory BFGS with an optional strong-Wolfe line search (PyTorch's
algorithm, itself after minFunc and Torch7's ``optim``)."""
from __future__ import annotations

import math

from ..autograd import no_grad
from ..ops.creation import zeros
from ..ops.join import cat
from .optimizer import Optimizer


def _cubic_minimum(x1, f1, g1, x2, f2, g2, bounds=None) -> float:
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2,
    clipped to ``bounds`` (default: the interval between x1 and x2); the middle of the bounds
    when the cubic has no real minimiser."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1 * d1 - g1 * g2
    if disc < 0:
        return (lo + hi) / 2.0
    d2 = math.sqrt(disc)
    if x1 <= x2:
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(x, lo), hi)


def _strong_wolfe(evaluate, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step length ``t`` along ``d`` satisfying the strong Wolfe conditions
    (``f(t) <= f + c1 t gtd`` and ``|f'(t)| <= -c2 gtd``): first a bracket is grown (each new
    trial the cubic interpolation of the last two, kept within [t + 0.01 (t - t_prev), 10 t]),
    then zoomed into. ``evaluate(t)`` returns the loss and flat gradient at ``x + t d``.
    Returns the loss, gradient and ``t`` at the point found, and how many evaluations it took."""
    d_norm = d.abs().max().item()
    f_new, g_new = evaluate(t)
    evals = 1
    gtd_new = g_new.dot(d).item()

    # Bracketing: points (t, f, g, gtd); stop at an interval known to contain a Wolfe point,
    # or at a Wolfe point itself.
    prev = (0, f, g, gtd)
    done = False
    bracket = None
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= prev[1]):
            bracket = [prev, (t, f_new, g_new, gtd_new)]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket = [(t, f_new, g_new, gtd_new)]
            done = True
            break
        if gtd_new >= 0:
            bracket = [prev, (t, f_new, g_new, gtd_new)]
            break
        t_next = _cubic_minimum(prev[0], prev[1], prev[3], t, f_new, gtd_new,
                                bounds=(t + 0.01 * (t - prev[0]), t * 10))
        prev = (t, f_new, g_new, gtd_new)
        t = t_next
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = g_new.dot(d).item()
        ls_iter += 1
    if ls_iter == max_ls:  # no bracket found: the last trial against the start
        bracket = [(0, f, g, gtd), (t, f_new, g_new, gtd_new)]

    # Zoom: shrink the bracket [low, high] (low: the lower loss) around a Wolfe point.
    low, high = (0, 1) if bracket[0][1] <= bracket[-1][1] else (1, 0)
    insufficient = False
    while not done and ls_iter < max_ls:
        if abs(bracket[1][0] - bracket[0][0]) * d_norm < tolerance_change:
            break
        (a, fa, _, ga), (b, fb, _, gb) = bracket
        t = _cubic_minimum(a, fa, ga, b, fb, gb)
        # A trial too close to an end of the bracket (twice running, or outside it) moves to
        # a tenth of the bracket's length from that end.
        top, bottom = max(a, b), min(a, b)
        margin = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < margin:
            if insufficient or t >= top or t <= bottom:
                t = top - margin if abs(t - top) < abs(t - bottom) else bottom + margin
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = g_new.dot(d).item()
        ls_iter += 1
        point = (t, f_new, g_new, gtd_new)
        if f_new > f + c1 * t * gtd or f_new >= bracket[low][1]:
            bracket[high] = point  # no sufficient decrease, or not below the low end
            low, high = (0, 1) if bracket[0][1] <= bracket[1][1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high][0] - bracket[low][0]) >= 0:
                bracket[high] = bracket[low]  # the old low end becomes the high end
            bracket[low] = point
    t, f_new, g_new, _ = bracket[low]
    return f_new, g_new, t, evals


class LBFGS(Optimizer):
    """Quasi-Newton steps from the last ``history_size`` pairs of parameter and gradient
    changes (the two-loop recursion), each ``step(closure)`` running up to ``max_iter``
    iterations and ``max_eval`` closure calls. Without a line search each iteration moves
    ``lr`` along the direction (the first one ``min(1, 1 / |g|_1) * lr``);
    ``line_search_fn="strong_wolfe"`` searches the step length instead.

    ``step`` needs the closure, which must zero the gradients, recompute the loss, call
    ``backward`` and return the loss. One parameter group only; all parameters on one device.
    The state (PyTorch's keys: ``func_evals``, ``n_iter``, ``d``, ``t``, ``old_dirs``,
    ``old_stps``, ``ro``, ``H_diag``, ``prev_flat_grad``, ``prev_loss``, ``al``) is kept with the
    first parameter, as PyTorch does. Scalars (``t``, ``ro``, ``H_diag``...) are Python floats;
    PyTorch keeps some as 0-dim tensors of the parameters' dtype, so float32 runs may differ
    from PyTorch's in the last bits.
    """

    def __init__(self, params, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change, history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    @staticmethod
    def _state_like(value, param):
        """As Optimizer's, and into the lists of the state (old_dirs, old_stps, ro, al)."""
        if isinstance(value, list):
            return [LBFGS._state_like(v, param) for v in value]
        return Optimizer._state_like(value, param)

    def _flat_grad(self):
        """All gradients as one vector (zeros for a parameter without one)."""
        return cat([p.grad.reshape(-1) if p.grad is not None else zeros(p.numel(), dtype=p.dtype, device=p.device)
                       for p in self._params], 0)

    def _add_to_params(self, step: float, direction) -> None:
        """``params += step * direction``, the flat ``direction`` cut into the parameters' shapes."""
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(direction[offset:offset + n].view_as(p), alpha=step)
            offset += n

    def _loss_and_grad_at(self, closure, x, t, d):
        """Loss and flat gradient at ``x + t d``; the parameters are put back to ``x`` after."""
        self._add_to_params(t, d)
        loss = float(self._evaluate(closure))
        flat_grad = self._flat_grad()
        for p, saved in zip(self._params, x):
            p.copy_(saved)
        return loss, flat_grad

    @no_grad()
    def step(self, closure):
        """Runs up to ``max_iter`` L-BFGS iterations; returns the loss the closure gave first."""
        if closure is None:
            raise TypeError("LBFGS.step needs a closure that recomputes the loss (and its gradients) and returns it")
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        for p in self._params:
            if not p.dtype.is_floating_point:
                raise RuntimeError("LBFGS optimizes floating point parameters only, but got a parameter of dtype "
                                   f"{p.dtype}")
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]
        if line_search_fn is not None and line_search_fn != "strong_wolfe":
            raise RuntimeError("only 'strong_wolfe' is supported")

        # One state for the whole optimizer, kept with the first parameter (as PyTorch does).
        state = self.state.setdefault(id(self._params[0]), {})
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = self._evaluate(closure)
        loss = float(orig_loss)
        evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if flat_grad.abs().max().item() <= tolerance_grad:  # already optimal
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag, prev_flat_grad, prev_loss = state.get("H_diag"), state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # the direction: steepest descent first, then the two-loop recursion
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = y.dot(s).item()
                if ys > 1e-10:  # keep the pair only when the curvature is positive
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y).item()  # scale of the initial inverse Hessian
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = flat_grad.neg()
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q).item() * ro[i]
                    q.add_(old_dirs[i], alpha=-al[i])
                d = r = q.mul(H_diag)
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(r).item() * ro[i]
                    r.add_(old_stps[i], alpha=al[i] - be_i)

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            # the step length
            if state["n_iter"] == 1:
                t = min(1.0, (1.0 / flat_grad.abs().sum()).item()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d).item()  # directional derivative
            if gtd > -tolerance_change:
                break

            ls_evals = 0
            if line_search_fn is not None:
                x_init = [p.clone() for p in self._params]
                loss, flat_grad, t, ls_evals = _strong_wolfe(
                    lambda step: self._loss_and_grad_at(closure, x_init, step, d), t, d, loss, flat_grad, gtd)
                self._add_to_params(t, d)
                opt_cond = flat_grad.abs().max().item() <= tolerance_grad
            else:
                self._add_to_params(t, d)
                opt_cond = False
                if n_iter != max_iter:  # re-evaluated except after the last iteration
                    loss = float(self._evaluate(closure))
                    flat_grad = self._flat_grad()
                    opt_cond = flat_grad.abs().max().item() <= tolerance_grad
                    ls_evals = 1
            evals += ls_evals
            state["func_evals"] += ls_evals

            if n_iter == max_iter or evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().max().item() <= tolerance_change:  # lack of progress
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss
