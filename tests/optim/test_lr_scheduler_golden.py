"""Every learning-rate schedule against PyTorch's own sequences (golden_lr.json, written by
make_golden_lr.py from the cases in lr_cases.py): the lr of two parameter groups, and the
momentum / beta1 that CyclicLR and OneCycleLR cycle, after construction and after each step.
Then what the sequences do not show: chaining, resuming, state_dict, step(epoch), warnings,
errors."""
from __future__ import annotations

import json
import math
import os
import pickle
import warnings

import numpy as np
import pytest

import minitorch
from minitorch.optim import lr_scheduler as S

import lr_cases

GOLDEN = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden_lr.json")))


@pytest.mark.parametrize("name", sorted(lr_cases.CASES))
def test_schedule_matches_pytorch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (SequentialLR's deprecated step(0) in the golden's PyTorch)
        ours = lr_cases.run(minitorch, name)
    want = GOLDEN["cases"][name]
    assert len(ours) == len(want)
    for step, (got, exp) in enumerate(zip(ours, want)):
        np.testing.assert_allclose(got, exp, rtol=1e-12, atol=1e-15, err_msg=f"{name}, step {step}")


def make_opt(lr=0.1, groups=1, kind="sgd"):
    ps = [{"params": [minitorch.nn.Parameter(minitorch.zeros(2))]} for _ in range(groups)]
    if kind == "adam":
        return minitorch.optim.Adam(ps, lr=lr)
    return minitorch.optim.SGD(ps, lr=lr, momentum=0.9)


def steps(opt, sched, n):
    out = []
    for _ in range(n):
        opt.step()
        sched.step()
        out.append(sched.get_last_lr()[0])
    return out


def test_initial_lr_and_base_lrs_and_last_lr():
    opt = make_opt(0.2)
    sched = S.ConstantLR(opt, factor=0.5, total_iters=2)
    assert opt.param_groups[0]["initial_lr"] == 0.2 and sched.base_lrs == [0.2]
    assert sched.last_epoch == 0 and sched.get_last_lr() == [0.1]  # epoch 0 set when built
    assert steps(opt, sched, 3) == [0.1, 0.2, 0.2]


def test_resume_from_last_epoch_continues_the_schedule():
    opt = make_opt(1.0)
    full = steps(opt, S.ExponentialLR(opt, gamma=0.5), 6)
    opt2 = make_opt(1.0)
    sched2 = S.ExponentialLR(opt2, gamma=0.5)
    steps(opt2, sched2, 3)
    resumed = S.ExponentialLR(opt2, gamma=0.5, last_epoch=3)  # initial_lr is in the groups
    assert steps(opt2, resumed, 3) == pytest.approx(full[3:], rel=1e-15)
    with pytest.raises(KeyError, match="initial_lr"):
        S.StepLR(make_opt(), step_size=2, last_epoch=4)


def test_state_dict_round_trip_and_pickles():
    opt = make_opt(1.0)
    sched = S.MultiStepLR(opt, milestones=[2, 4], gamma=0.5)
    steps(opt, sched, 3)
    state = sched.state_dict()
    assert "optimizer" not in state and state["last_epoch"] == 3
    opt2 = make_opt(1.0)
    sched2 = S.MultiStepLR(opt2, milestones=[9], gamma=0.1)
    sched2.load_state_dict(pickle.loads(pickle.dumps(state)))
    opt2.param_groups[0]["lr"] = opt.param_groups[0]["lr"]
    assert steps(opt2, sched2, 3) == steps(opt, sched, 3)


def test_lambda_state_dict_keeps_callable_objects_only():
    class Warmup:
        def __init__(self):
            self.n = 2

        def __call__(self, epoch):
            return min(1.0, (epoch + 1) / self.n)

    opt = make_opt(1.0, groups=2)
    sched = S.LambdaLR(opt, [Warmup(), lambda e: 1.0])
    state = sched.state_dict()
    assert state["lr_lambdas"] == [{"n": 2}, None]
    fresh = Warmup()
    fresh.n = 7
    other = S.LambdaLR(make_opt(1.0, groups=2), [fresh, lambda e: 0.5])
    other.load_state_dict(state)
    assert fresh.n == 2 and "lr_lambdas" in state  # the caller's dict is left whole
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        S.LambdaLR(opt, [lambda e: 1.0])
    with pytest.raises(TypeError, match="lr_lambda should be a function"):
        S.MultiplicativeLR(make_opt(), 0.5)


def test_chainable_forms_compose():
    # two schedulers stepping one optimizer: their factors multiply
    opt = make_opt(1.0)
    a, b = S.StepLR(opt, step_size=2, gamma=0.5), S.ExponentialLR(opt, gamma=0.9)
    seen = []
    for _ in range(4):
        opt.step()
        a.step()
        b.step()
        seen.append(opt.param_groups[0]["lr"])
    assert seen == pytest.approx([0.9, 0.5 * 0.9 ** 2, 0.5 * 0.9 ** 3, 0.25 * 0.9 ** 4], rel=1e-14)


def test_step_with_epoch_uses_the_closed_form_and_warns():
    opt = make_opt(1.0)
    sched = S.StepLR(opt, step_size=3, gamma=0.1)
    opt.step()
    with pytest.warns(UserWarning, match="epoch parameter"):
        sched.step(7)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.01) and sched.last_epoch == 7


def test_cosine_warm_restarts_fractional_epochs():
    opt = make_opt(1.0)
    sched = S.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fractional epoch is its documented use: no warning
        sched.step(0.5)
    assert opt.param_groups[0]["lr"] == pytest.approx((1 + math.cos(math.pi * 0.5 / 2)) / 2)
    sched.step(2.5)  # the second period (T_i = 4) started at epoch 2
    assert sched.T_i == 4 and sched.T_cur == pytest.approx(0.5)
    with pytest.raises(ValueError, match="non-negative epoch"):
        sched.step(-1)


def test_scheduler_step_before_optimizer_step_warns():
    opt = make_opt()
    sched = S.StepLR(opt, step_size=2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    opt2 = make_opt()
    sched2 = S.StepLR(opt2, step_size=2)
    opt2.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched2.step()


def test_optimizer_with_a_scheduler_still_pickles_and_copies():
    import copy
    opt = make_opt(0.5)
    S.StepLR(opt, step_size=2)
    for clone in (pickle.loads(pickle.dumps(opt)), copy.deepcopy(opt)):
        assert "step" not in vars(clone) and clone.param_groups[0]["lr"] == 0.5
        clone.step()  # its own step, not the original's
    assert not hasattr(copy.deepcopy(opt), "_opt_called")


def test_get_lr_outside_step_warns():
    sched = S.StepLR(make_opt(), step_size=2)
    with pytest.warns(UserWarning, match="get_last_lr"):
        sched.get_lr()


def test_plateau_details():
    opt = make_opt(1.0)
    sched = S.ReduceLROnPlateau(opt, patience=0, factor=0.5, eps=0.3)
    sched.step(minitorch.tensor(1.0))  # a 0-dim tensor is a metric too
    sched.step(2.0)
    assert opt.param_groups[0]["lr"] == 0.5
    sched.step(2.0)
    sched.step(2.0)  # 0.5 -> 0.25 is a change under eps = 0.3: ignored
    assert opt.param_groups[0]["lr"] == 0.5 and sched.get_last_lr() == [0.5]
    state = sched.state_dict()
    other = S.ReduceLROnPlateau(make_opt(1.0), mode="max")
    other.load_state_dict(state)
    assert other.mode == "min" and other.mode_worse == math.inf
    opt.add_param_group({"params": [minitorch.nn.Parameter(minitorch.zeros(1))], "lr": 1.0})
    with pytest.raises(RuntimeError, match="number of param groups"):
        fixed = S.ReduceLROnPlateau(make_opt(1.0), patience=0, min_lr=[0.0])
        fixed.optimizer.add_param_group({"params": [minitorch.nn.Parameter(minitorch.zeros(1))]})
        fixed.step(1.0)
        fixed.step(2.0)


@pytest.mark.parametrize("make, match", [
    (lambda o: S.ConstantLR(o, factor=1.5), "between 0 and 1"),
    (lambda o: S.LinearLR(o, start_factor=0), "greater than 0"),
    (lambda o: S.LinearLR(o, end_factor=2), "between 0 and 1"),
    (lambda o: S.ReduceLROnPlateau(o, factor=1.0), "Factor should be < 1.0"),
    (lambda o: S.ReduceLROnPlateau(o, mode="up"), "mode up is unknown"),
    (lambda o: S.ReduceLROnPlateau(o, threshold_mode="pct"), "threshold mode pct is unknown"),
    (lambda o: S.ReduceLROnPlateau(o, min_lr=[0.1, 0.2]), "expected 1 min_lrs, got 2"),
    (lambda o: S.CyclicLR(o, 0.1, 1.0, mode="sawtooth"), "mode is invalid"),
    (lambda o: S.CyclicLR(o, [0.1, 0.2], 1.0), "base_lr must have the same length"),
    (lambda o: S.OneCycleLR(o, 1.0), "total_steps OR"),
    (lambda o: S.OneCycleLR(o, 1.0, total_steps=0), "positive integer total_steps"),
    (lambda o: S.OneCycleLR(o, 1.0, epochs=2, steps_per_epoch=0), "positive integer steps_per_epoch"),
    (lambda o: S.OneCycleLR(o, 1.0, total_steps=5, pct_start=1.5), "between 0 and 1 pct_start"),
    (lambda o: S.OneCycleLR(o, 1.0, total_steps=5, anneal_strategy="exp"), "anneal_strategy"),
    (lambda o: S.CosineAnnealingWarmRestarts(o, T_0=0), "positive integer T_0"),
    (lambda o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0), "T_mult >= 1"),
    (lambda o: S.SequentialLR(o, [S.StepLR(o, 2)], milestones=[3]), "one more than the number of milestone"),
    (lambda o: S.SequentialLR(o, [], milestones=[]), "at least one scheduler"),
    (lambda o: S.ChainedScheduler([S.StepLR(o, 2), S.StepLR(make_opt(), 2)]), "same optimizer"),
    (lambda o: S.ChainedScheduler([S.ReduceLROnPlateau(o)]), "does not support `ReduceLROnPlateau`"),
    (lambda o: S.CosineAnnealingLR(o, T_max=0), "T_max must be positive"),
    (lambda o: S.StepLR(o, step_size=0), "step_size must be positive"),
])
def test_errors(make, match):
    with pytest.raises(ValueError, match=match):
        make(make_opt())


def test_not_an_optimizer_and_no_momentum():
    with pytest.raises(TypeError, match="is not an Optimizer"):
        S.StepLR(object(), step_size=2)
    plain = minitorch.optim.RMSprop([minitorch.nn.Parameter(minitorch.zeros(1))], lr=0.1)
    del plain.defaults["momentum"]
    with pytest.raises(ValueError, match="must support momentum or beta1"):
        S.OneCycleLR(plain, 1.0, total_steps=4)


def test_one_cycle_past_the_end_raises():
    opt = make_opt()
    sched = S.OneCycleLR(opt, 1.0, total_steps=2)
    steps(opt, sched, 2)
    with pytest.raises(ValueError, match="Tried to step 3 times"):
        steps(opt, sched, 1)


def test_scheduler_keeps_no_reference_cycle_on_the_optimizer():
    import gc
    import weakref
    gc.disable()
    try:
        opt = make_opt()
        sched = S.StepLR(opt, step_size=2)
        opt.step()
        sched.step()
        alive = weakref.ref(opt)
        del opt, sched
        assert alive() is None  # freed at once, as PyTorch's (its state too)
    finally:
        gc.enable()
