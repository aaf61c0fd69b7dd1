"""Learning-rate schedules, with PyTorch's names and rules: call ``scheduler.step()`` after
``optimizer.step()`` (once an epoch, or once a batch for CyclicLR / OneCycleLR), and
``ReduceLROnPlateau.step(val_loss)`` with the metric it watches.

How they work (as in PyTorch):

- Building a scheduler records each group's ``initial_lr`` (``base_lrs``) and takes a first
  step to epoch 0, which sets the epoch-0 lr (ConstantLR and LinearLR start below it).
- ``step()`` advances ``last_epoch`` by one and sets each group's ``lr`` from ``get_lr()``.
  Most schedules are *chainable*: ``get_lr()`` changes the group's current lr by a factor
  (StepLR multiplies it by gamma at each multiple of step_size), so several schedulers on
  one optimizer compose (ChainedScheduler, SequentialLR). Their closed forms, lr as a
  function of the epoch alone, serve ``step(epoch)`` (deprecated, with a warning).
- ``get_last_lr()`` is what the last step set; ``state_dict()`` is everything but the
  optimizer (lambdas are not saved; callable objects' attributes are).
"""
from __future__ import annotations

import math
import types
import warnings
import weakref
from bisect import bisect_right
from collections import Counter

from .optimizer import Optimizer

__all__ = ["LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
           "ExponentialLR", "PolynomialLR", "CosineAnnealingLR", "SequentialLR", "ChainedScheduler",
           "ReduceLROnPlateau", "CyclicLR", "CosineAnnealingWarmRestarts", "OneCycleLR"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where possible. "
    "Please use `scheduler.step()` to step the scheduler. During the deprecation, if epoch is different from "
    "None, the closed form is used instead of the new chainable form, where available.")


def _per_group(name: str, optimizer, value) -> list:
    """value for each parameter group: a list/tuple of one per group, or one for all."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. {name} has "
                             f"{len(value)} values, param_groups has {len(optimizer.param_groups)}.")
        return list(value)
    return [value] * len(optimizer.param_groups)


def _check_optimizer(optimizer) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def _mark_optimizer_steps(optimizer) -> None:
    """Wraps optimizer.step once so the scheduler can tell whether it ran before the
    scheduler's first step (the usual mistake: the other order skips the first lr). The
    wrapper holds the optimizer weakly and its class's step, so the optimizer (and its
    state) is freed as soon as it is dropped, with no reference cycle."""
    if getattr(optimizer.step, "_wrapped_by_lr_sched", False):
        return
    owner = weakref.ref(optimizer)
    step = optimizer.step
    func = getattr(step, "__func__", None)  # a bound method: call its function on the live optimizer
    if func is not None:
        step = None

    def step_and_mark(*args, **kwargs):
        opt = owner()
        opt._opt_called = True
        return func(opt, *args, **kwargs) if func is not None else step(*args, **kwargs)

    step_and_mark._wrapped_by_lr_sched = True
    optimizer.step = step_and_mark


def _save_callables(fns) -> list:
    """A state_dict entry for functions: None for plain functions and lambdas (not
    picklable), a copy of the attributes of callable objects."""
    return [None if isinstance(fn, types.FunctionType) else dict(fn.__dict__) for fn in fns]


class LRScheduler:
    """The base class: subclasses give ``get_lr()`` (and, where one exists, the closed
    form ``_get_closed_form_lr()``). ``last_epoch=-1`` starts a schedule; another value
    resumes one (each group must then hold its ``initial_lr``)."""

    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer, last_epoch: int = -1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming an "
                                   "optimizer")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        _mark_optimizer_steps(optimizer)
        self._initial_step()

    def _initial_step(self) -> None:
        """The step to epoch 0 every schedule takes when it is built."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list:
        """Each group's lr at ``last_epoch`` (the chainable form)."""
        raise NotImplementedError

    def get_last_lr(self) -> list:
        """The lrs the last ``step()`` set."""
        return self._last_lr

    def _current_lrs(self) -> list:
        return [group["lr"] for group in self.optimizer.param_groups]

    def _warn_outside_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=3)

    def step(self, epoch: int | None = None) -> None:
        """Advances the schedule one epoch (or, deprecated, to ``epoch``) and sets each
        group's lr."""
        if self._step_count == 1:
            if not getattr(self.optimizer.step, "_wrapped_by_lr_sched", False):
                warnings.warn("Seems like `optimizer.step()` has been overridden after learning rate scheduler "
                              "initialization. Please, make sure to call `optimizer.step()` before "
                              "`lr_scheduler.step()`.", UserWarning)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`. You should call "
                              "them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`. Failure "
                              "to do this will result in skipping the first value of the learning rate schedule.",
                              UserWarning)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed = getattr(self, "_get_closed_form_lr", None)
                values = closed() if closed is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = self._current_lrs()

    def state_dict(self) -> dict:
        """Everything but the optimizer (PyTorch's rule), for checkpoints."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)


class _LambdaScheduler(LRScheduler):
    """LambdaLR and MultiplicativeLR: one function of the epoch per group."""

    def __init__(self, optimizer, lr_lambda, last_epoch: int = -1):
        self.optimizer = optimizer
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = _save_callables(self.lr_lambdas)
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        saved = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for fn, attrs in zip(self.lr_lambdas, saved):
            if attrs is not None:
                fn.__dict__.update(attrs)


class LambdaLR(_LambdaScheduler):
    """lr = initial lr * ``lr_lambda(epoch)`` (one function, or one per group).

    >>> sched = LambdaLR(opt, lambda epoch: min(1.0, (epoch + 1) / 500))   # linear warm-up
    """

    def get_lr(self) -> list:
        self._warn_outside_step()
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaScheduler):
    """Each step multiplies the lr by ``lr_lambda(epoch)``."""

    def get_lr(self) -> list:
        self._warn_outside_step()
        if self._is_initial:
            return self._current_lrs()
        return [lr * fn(self.last_epoch) for fn, lr in zip(self.lr_lambdas, self._current_lrs())]


class StepLR(LRScheduler):
    """lr is multiplied by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1):
        if step_size <= 0:  # (PyTorch divides by it at the first step)
            raise ValueError(f"StepLR: step_size must be positive, got {step_size}")
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list:
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """lr is multiplied by ``gamma`` at each epoch in ``milestones`` (a milestone given
    twice multiplies twice)."""

    def __init__(self, optimizer, milestones, gamma: float = 0.1, last_epoch: int = -1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        times = self.milestones.get(self.last_epoch, 0)
        if not times:
            return self._current_lrs()
        return [lr * self.gamma ** times for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list:
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base * self.gamma ** passed for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """lr is ``factor`` * initial lr for the first ``total_iters`` epochs, then the initial lr."""

    def __init__(self, optimizer, factor: float = 1.0 / 3, total_iters: int = 5, last_epoch: int = -1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._current_lrs()]
        if self.last_epoch != self.total_iters:
            return self._current_lrs()
        return [lr * (1.0 / self.factor) for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list:
        reached = self.last_epoch >= self.total_iters
        return [base * (self.factor + reached * (1 - self.factor)) for base in self.base_lrs]


class LinearLR(LRScheduler):
    """The lr factor moves linearly from ``start_factor`` to ``end_factor`` over
    ``total_iters`` epochs (a warm-up with the defaults), then stays."""

    def __init__(self, optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0, total_iters: int = 5,
                 last_epoch: int = -1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in self._current_lrs()]
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current_lrs()
        # the ratio of this epoch's factor to the last one's
        change = self.end_factor - self.start_factor
        ratio = 1.0 + change / (self.total_iters * self.start_factor + (self.last_epoch - 1) * change)
        return [lr * ratio for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list:
        done = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * (self.start_factor + (self.end_factor - self.start_factor) * done) for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Each step multiplies the lr by ``gamma``."""

    def __init__(self, optimizer, gamma: float, last_epoch: int = -1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        if self._is_initial:  # (resuming must not move the lr a step ahead)
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list:
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """lr = initial lr * (1 - epoch / total_iters) ** power, reaching 0 at ``total_iters``."""

    def __init__(self, optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1):
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current_lrs()
        t, n = self.last_epoch, self.total_iters
        factor = ((1.0 - t / n) / (1.0 - (t - 1) / n)) ** self.power
        return [lr * factor for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list:
        left = 1.0 - min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * left ** self.power for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """lr follows a cosine from its initial value down to ``eta_min`` over ``T_max`` epochs
    (and, stepped further, back up: the cosine is periodic, as PyTorch's)."""

    def __init__(self, optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1):  # noqa: N803
        if T_max <= 0:  # (PyTorch divides by it at the first step)
            raise ValueError(f"CosineAnnealingLR: T_max must be positive, got {T_max}")
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        t, T, low = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._current_lrs()
        if self._step_count == 1 and t > 0:  # resumed mid-schedule: the closed form
            return [low + (base - low) * (1 + math.cos(t * math.pi / T)) / 2 for base in self.base_lrs]
        if (t - 1 - T) % (2 * T) == 0:  # leaving the trough (the ratio below would divide by 0)
            return [lr + (base - low) * (1 - math.cos(math.pi / T)) / 2
                    for base, lr in zip(self.base_lrs, self._current_lrs())]
        ratio = (1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
        return [ratio * (lr - low) + low for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list:
        c = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
        return [self.eta_min + (base - self.eta_min) * c for base in self.base_lrs]


def _check_children(owner: str, optimizer, schedulers) -> None:
    for i, s in enumerate(schedulers):
        if not hasattr(s, "optimizer"):
            raise TypeError(f"{owner} at index {i} should have `optimizer` as its attribute.")
        if isinstance(s, ReduceLROnPlateau):
            raise ValueError(f"{owner} does not support `ReduceLROnPlateau` scheduler as it requires additional "
                             "kwargs to be specified when calling `step`, but got one at index "
                             f"{i} in the given schedulers sequence.")
        if s.optimizer is not optimizer:
            raise ValueError(f"{owner} expects all schedulers to belong to the same optimizer, but got scheduler "
                             f"{type(s).__name__} at index {i} with another optimizer.")


class _OfSchedulers(LRScheduler):
    """SequentialLR and ChainedScheduler: their state_dict holds each child's."""

    def state_dict(self) -> dict:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        children = state.pop("_schedulers")
        self.__dict__.update(state)
        for s, saved in zip(self._schedulers, children):
            s.load_state_dict(saved)


class SequentialLR(_OfSchedulers):
    """One scheduler after another: ``schedulers[i]`` runs from ``milestones[i - 1]`` on
    (each starting at its own epoch 0).

    >>> warm = LinearLR(opt, start_factor=0.1, total_iters=5)
    >>> sched = SequentialLR(opt, [warm, CosineAnnealingLR(opt, T_max=95)], milestones=[5])
    """

    def __init__(self, optimizer, schedulers, milestones, last_epoch: int = -1):
        if len(schedulers) < 1:
            raise ValueError("SequentialLR expects at least one scheduler, but got no scheduler.")
        _check_children("SequentialLR", optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be one more than the "
                             f"number of milestone points, but got number of schedulers {len(schedulers)} and the "
                             f"number of milestones to be equal to {len(milestones)}")
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # The children each took their first step when built: start over from the initial
        # lrs, take those steps back, and let only the first one start.
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        self._undo_first_steps(self)
        self._schedulers[0]._initial_step()
        self._last_lr = self._schedulers[0].get_last_lr()

    def _undo_first_steps(self, sched) -> None:
        children = getattr(sched, "_schedulers", None)
        if children is not None:
            for s in children:
                self._undo_first_steps(s)
        elif hasattr(sched, "last_epoch"):
            sched.last_epoch -= 1

    def step(self) -> None:
        self.last_epoch += 1
        i = bisect_right(self._milestones, self.last_epoch)
        current = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            current._update_lr(0)  # the next scheduler starts at its epoch 0
        else:
            current.step()
        self._last_lr = current.get_last_lr()


class ChainedScheduler(_OfSchedulers):
    """Steps every scheduler in ``schedulers`` at each ``step()``: their chainable factors
    multiply (e.g. a warm-up times an exponential decay)."""

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise ValueError("ChainedScheduler expects at least one scheduler to be chained, but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_children("ChainedScheduler", optimizer, schedulers)
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = self._current_lrs()

    def step(self) -> None:
        for s in self._schedulers:
            s.step()
        self._last_lr = self._current_lrs()


class ReduceLROnPlateau(LRScheduler):
    """Multiplies the lr by ``factor`` once the watched metric has not improved for more than
    ``patience`` steps: ``scheduler.step(val_loss)``. Improvement is measured against the
    best value so far with ``threshold`` (relative or absolute); after a reduction,
    ``cooldown`` steps pass before bad steps count again; the lr never goes below ``min_lr``,
    nor changes by less than ``eps``."""

    def __init__(self, optimizer, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0, min_lr=0,
                 eps: float = 1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        _check_optimizer(optimizer)
        self.factor = factor
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience, self.cooldown, self.eps = patience, cooldown, eps
        self.last_epoch = 0
        self._last_lr = self._current_lrs()
        self._set_mode(mode, threshold, threshold_mode)
        self._reset()

    def _set_mode(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in ("min", "max"):
            raise ValueError("mode " + str(mode) + " is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + str(threshold_mode) + " is unknown!")
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.mode_worse = math.inf if mode == "min" else -math.inf

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def _is_better(self, value: float, best: float) -> bool:
        if self.mode == "min":
            return value < (best * (1.0 - self.threshold) if self.threshold_mode == "rel" else best - self.threshold)
        return value > (best * (self.threshold + 1.0) if self.threshold_mode == "rel" else best + self.threshold)

    def step(self, metrics, epoch=None) -> None:  # noqa: D102 (PyTorch's signature)
        current = float(metrics)  # a 0-dim tensor too
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in the cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = self._current_lrs()

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(f"The number of param groups in the `optimizer` ({len(groups)}) differs from "
                                   f"when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due "
                                   "to a new param group being added to the optimizer. Please modify the `min_lrs` "
                                   "field to match the length of the `optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, low in zip(groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, low)
            if old - new > self.eps:
                group["lr"] = new

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
        self._set_mode(self.mode, self.threshold, self.threshold_mode)


def _set_momentum(group: dict, use_beta1: bool, momentum: float) -> None:
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def _cycle_momentum_start(scheduler, optimizer, base_momentum, max_momentum, last_epoch: int) -> tuple:
    """For cycle_momentum: whether the optimizer's momentum is beta1 (Adam) or momentum
    (SGD), and the per-group bounds; a fresh schedule starts at max_momentum."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
    use_beta1 = "betas" in optimizer.defaults
    bases = _per_group("base_momentum", optimizer, base_momentum)
    maxes = _per_group("max_momentum", optimizer, max_momentum)
    if last_epoch == -1:
        for high, low, group in zip(maxes, bases, optimizer.param_groups):
            _set_momentum(group, use_beta1, high)
            group["max_momentum"], group["base_momentum"] = high, low
    return use_beta1, bases, maxes


class CyclicLR(LRScheduler):
    """The lr cycles between ``base_lr`` and ``max_lr`` (triangle waves: ``mode``
    triangular, triangular2 halving the height each cycle, exp_range shrinking it by
    gamma**iteration, or a ``scale_fn`` of yours), stepped once a batch; momentum cycles the
    other way between ``max_momentum`` and ``base_momentum``."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up: int = 2000, step_size_down: int | None = None,
                 mode: str = "triangular", gamma: float = 1.0, scale_fn=None, scale_mode: str = "cycle",
                 cycle_momentum: bool = True, base_momentum=0.8, max_momentum=0.9, last_epoch: int = -1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_mode()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1, self.base_momentums, self.max_momentums = _cycle_momentum_start(
                self, optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_mode(self) -> None:
        # the built-in modes fix what the scale is a function of
        if self._scale_fn_custom is None:
            self.scale_mode = "iterations" if self.mode == "exp_range" else "cycle"

    def scale_fn(self, x: float) -> float:
        """The height scale of a cycle (of the cycle number or of the iteration)."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        if self.mode == "exp_range":
            return self.gamma ** x
        return 1.0

    def get_lr(self) -> list:
        self._warn_outside_step()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle  # position in the cycle, 0 .. 1
        rise = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [low + (high - low) * rise * scale for low, high in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, low, high in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                _set_momentum(group, self.use_beta1, high - (high - low) * rise * scale)
        return lrs

    def state_dict(self) -> dict:
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None if fn is None else _save_callables([fn])[0]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        fn = state.pop("_scale_fn_custom")
        custom = self._scale_fn_custom
        super().load_state_dict(state)
        self._scale_fn_custom = custom
        if fn is not None and custom is not None:
            custom.__dict__.update(fn)
        self._init_scale_mode()


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from the initial lr to ``eta_min`` over ``T_0`` epochs, then a restart
    at the initial lr, each period ``T_mult`` times the last. ``step(epoch)`` may take a
    fractional epoch (``epoch + i / iters`` once a batch), without a warning."""

    def __init__(self, optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1):
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        c = (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
        return [self.eta_min + (base - self.eta_min) * c for base in self.base_lrs]

    def step(self, epoch=None) -> None:
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur %= self.T_i
                self.T_i *= self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch < self.T_0:
                self.T_i, self.T_cur = self.T_0, epoch
            elif self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:  # which period epoch falls in: T_0 (1 + m + ... + m^(n-1)) <= epoch
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult ** n
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            lrs = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, lrs):
            group["lr"] = lr
        self._last_lr = self._current_lrs()


class OneCycleLR(LRScheduler):
    """The 1cycle policy, stepped once a batch for ``total_steps`` (or ``epochs *
    steps_per_epoch``) steps: the lr rises from ``max_lr / div_factor`` to ``max_lr`` over
    ``pct_start`` of the steps, then anneals to ``initial_lr / final_div_factor`` (cosine or
    linear); momentum moves the other way. ``three_phase``: up, back down to the initial
    lr, then down to the minimum, as in the paper."""

    def __init__(self, optimizer, max_lr, total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum=0.85, max_momentum=0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False, last_epoch: int = -1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            if not isinstance(total_steps, int) or total_steps <= 0:
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        if not isinstance(pct_start, float) or pct_start < 0 or pct_start > 1:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        # (last step of the phase, lr from, lr to, momentum from, momentum to): group keys
        rise_end = float(pct_start * self.total_steps) - 1
        if three_phase:
            self._schedule_phases = [
                dict(end_step=rise_end, start_lr="initial_lr", end_lr="max_lr",
                     start_momentum="max_momentum", end_momentum="base_momentum"),
                dict(end_step=float(2 * pct_start * self.total_steps) - 2, start_lr="max_lr", end_lr="initial_lr",
                     start_momentum="base_momentum", end_momentum="max_momentum"),
                dict(end_step=self.total_steps - 1, start_lr="initial_lr", end_lr="min_lr",
                     start_momentum="max_momentum", end_momentum="max_momentum")]
        else:
            self._schedule_phases = [
                dict(end_step=rise_end, start_lr="initial_lr", end_lr="max_lr",
                     start_momentum="max_momentum", end_momentum="base_momentum"),
                dict(end_step=self.total_steps - 1, start_lr="max_lr", end_lr="min_lr",
                     start_momentum="base_momentum", end_momentum="max_momentum")]
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for top, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1, _, _ = _cycle_momentum_start(self, optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "linear":
            return (end - start) * pct + start
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    def get_lr(self) -> list:
        self._warn_outside_step()
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, phase in enumerate(self._schedule_phases):
                if step <= phase["end_step"] or i == len(self._schedule_phases) - 1:
                    pct = (step - start) / (phase["end_step"] - start)
                    lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        _set_momentum(group, self.use_beta1, self._anneal(
                            group[phase["start_momentum"]], group[phase["end_momentum"]], pct))
                    break
                start = phase["end_step"]
        return lrs
