"""``Optimizer``: parameter groups, state, ``zero_grad`` and ``state_dict``; and how
SGD, Adam and AdamW choose between their fused step and their reference step.

Fused or not (PyTorch's ``fused`` and ``foreach`` keyword arguments):

- ``fused=None`` (the default): the fused step, a C++ kernel pass that reads each
  gradient and state once and writes the parameter and state in place. It is also a
  multi-tensor step: the parameters of a group that share a device and a dtype are passed
  as lists, and on a GPU a few launches update them all (``cuda/multi_tensor.cuh``), so the
  step's CPU time does not grow with the number of parameters;
- ``fused=False``, or ``foreach=False`` with ``fused`` unset (PyTorch's "for-loop"
  implementation): the reference step, the same formulas written with tensor ops;
- ``fused=True``: the fused step, and a RuntimeError for a parameter that is not floating.

minitorch has no separate "foreach" step: ``foreach=True`` is the fused step too. A parameter that is not contiguous (a strided view) always takes the
reference step, whose tensor ops work on any layout.
"""
from __future__ import annotations

from .. import _C


class Optimizer:
    """Base class. ``params`` is an iterable of tensors or of dicts (parameter groups
    with their own options, e.g. ``[{"params": ..., "lr": 0.01}, ...]``)."""

    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        self.state: dict = {}
        self.param_groups: list[dict] = []
        if isinstance(params, _C.Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got a Tensor")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, group: dict) -> None:
        group = dict(group)
        params = group["params"]
        group["params"] = [params] if isinstance(params, _C.Tensor) else list(params)
        for p in group["params"]:
            if not isinstance(p, _C.Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for k, v in self.defaults.items():
            group.setdefault(k, v)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.zero_()

    def state_dict(self) -> dict:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}`` like PyTorch."""
        index = {}
        groups = []
        for g in self.param_groups:
            ids = []
            for p in g["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            groups.append({**{k: v for k, v in g.items() if k != "params"}, "params": ids})
        state = {index[id(p)]: dict(s) for g in self.param_groups for p in g["params"]
                 if (s := self.state.get(id(p)))}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups) or any(
                len(a["params"]) != len(b["params"]) for a, b in zip(groups, self.param_groups)):
            raise ValueError("loaded state dict has a different number of parameter groups or parameters")
        params = [p for g in self.param_groups for p in g["params"]]
        for g, saved in zip(self.param_groups, groups):
            g.update({k: v for k, v in saved.items() if k != "params"})
        # Like PyTorch: the state is copied onto each parameter's device (a checkpoint read
        # on the CPU can resume a model on cuda), and floating state takes its dtype.
        self.state = {}
        for i, saved in state_dict["state"].items():
            p = params[int(i)]
            self.state[id(p)] = {k: self._state_like(v, p) for k, v in saved.items()}

    @staticmethod
    def _state_like(value, param):
        if not isinstance(value, _C.Tensor):
            return value
        dtype = param.dtype if value.dtype.is_floating_point else value.dtype
        return value.to(param.device, dtype, copy=True)

    def step(self, closure=None):
        raise NotImplementedError

    def __getstate__(self) -> dict:
        # A learning-rate scheduler wraps this instance's step (lr_scheduler.py) to see
        # whether it ran: pickles and deep copies keep the class's step instead.
        state = dict(self.__dict__)
        state.pop("step", None)
        state.pop("_opt_called", None)
        return state

    @staticmethod
    def _evaluate(closure):
        """Runs a closure (which recomputes the loss) with gradients on; None without one."""
        if closure is None:
            return None
        from ..autograd import enable_grad

        with enable_grad():
            return closure()

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for k in sorted(k for k in g if k != "params"):
                lines.append(f"    {k}: {g[k]}")
        return "\n".join(lines) + "\n)"


def _check_fused_args(foreach: bool | None, fused: bool | None) -> None:
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _fused_buckets(group: dict, params, reference_step) -> list:
    """Splits ``params`` (those with a gradient) into the fused step's buckets, one
    ``(params, grads)`` pair per device and dtype, running ``reference_step(p)`` for each
    parameter that takes the reference step (the rule is in this module's docstring)."""
    fused = group.get("fused")
    if fused is False or (fused is None and group.get("foreach") is False):
        for p in params:
            if p.grad is not None:
                reference_step(p)
        return []
    buckets, reference = _C._multi_tensor_groups(params)
    if fused:  # checked before any parameter changes
        for p in reference:
            if not p.dtype.is_floating_point:
                raise RuntimeError("`fused=True` requires all the params to be floating point Tensors, "
                                   f"but got {p.dtype}")
    for p in reference:
        reference_step(p)
    return buckets
