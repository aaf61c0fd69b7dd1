"""The learning-rate schedules of tests/optim/test_lr_scheduler_golden.py, written once for
either library (``lib`` is minitorch or torch: their optim APIs match). make_golden_lr.py runs
them with PyTorch and stores each lr (and momentum) sequence in golden_lr.json."""
from __future__ import annotations

import math

# Validation losses for ReduceLROnPlateau: improves, stalls, improves a little, stalls.
PLATEAU_METRICS = [1.0, 0.9, 0.95, 0.92, 0.91, 0.91, 0.905, 0.9, 0.95, 0.89, 0.9, 0.9, 0.9, 0.9, 0.9, 0.88,
                   0.88, 0.88, 0.88, 0.88, 0.88, 0.88, 0.88, 0.88, 0.88]


def _lambda_warmup(epoch):
    return min(1.0, (epoch + 1) / 4)


def make_optimizer(lib, kind: str):
    """Two parameter groups (lr 0.1 and 0.05), SGD with momentum or Adam."""
    a = lib.nn.Parameter(lib.zeros(2))
    b = lib.nn.Parameter(lib.zeros(3))
    groups = [{"params": [a]}, {"params": [b], "lr": 0.05}]
    if kind == "adam":
        return lib.optim.Adam(groups, lr=0.1)
    return lib.optim.SGD(groups, lr=0.1, momentum=0.9)


# name: (optimizer kind, steps, scheduler factory (lr_scheduler module, optimizer))
CASES = {
    "lambda": ("sgd", 8, lambda s, o: s.LambdaLR(o, _lambda_warmup)),
    "lambda_per_group": ("sgd", 6, lambda s, o: s.LambdaLR(o, [_lambda_warmup, lambda e: 0.9 ** e])),
    "multiplicative": ("sgd", 6, lambda s, o: s.MultiplicativeLR(o, lambda e: 0.95)),
    "step": ("sgd", 10, lambda s, o: s.StepLR(o, step_size=3, gamma=0.5)),
    "multistep": ("sgd", 10, lambda s, o: s.MultiStepLR(o, milestones=[2, 5, 5, 8], gamma=0.1)),
    "constant": ("sgd", 8, lambda s, o: s.ConstantLR(o, factor=0.25, total_iters=4)),
    "linear_warmup": ("sgd", 8, lambda s, o: s.LinearLR(o, start_factor=0.1, total_iters=5)),
    "linear_decay": ("sgd", 8, lambda s, o: s.LinearLR(o, start_factor=1.0, end_factor=0.2, total_iters=6)),
    "exponential": ("sgd", 6, lambda s, o: s.ExponentialLR(o, gamma=0.8)),
    "polynomial": ("sgd", 8, lambda s, o: s.PolynomialLR(o, total_iters=6, power=2.0)),
    "cosine": ("sgd", 25, lambda s, o: s.CosineAnnealingLR(o, T_max=10, eta_min=0.001)),
    "cosine_restarts": ("sgd", 20, lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01)),
    "cosine_restarts_flat": ("sgd", 9, lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=4)),
    "sequential": ("sgd", 12, lambda s, o: s.SequentialLR(
        o, [s.LinearLR(o, start_factor=0.1, total_iters=3), s.ExponentialLR(o, gamma=0.7)], milestones=[4])),
    "sequential_three": ("sgd", 14, lambda s, o: s.SequentialLR(
        o, [s.ConstantLR(o, factor=0.5, total_iters=2), s.StepLR(o, 2, 0.5), s.CosineAnnealingLR(o, 5)],
        milestones=[3, 8])),
    "chained": ("sgd", 10, lambda s, o: s.ChainedScheduler(
        [s.ConstantLR(o, factor=0.1, total_iters=4), s.ExponentialLR(o, gamma=0.9)])),
    "plateau": ("sgd", len(PLATEAU_METRICS), lambda s, o: s.ReduceLROnPlateau(o, patience=2, cooldown=1,
                                                                           factor=0.5, min_lr=[0.01, 0.02])),
    "plateau_max_abs": ("sgd", len(PLATEAU_METRICS), lambda s, o: s.ReduceLROnPlateau(
        o, mode="max", threshold=0.02, threshold_mode="abs", patience=1)),
    "cyclic": ("sgd", 14, lambda s, o: s.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=3,
                                                  step_size_down=2)),
    "cyclic_triangular2": ("sgd", 14, lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=2, mode="triangular2")),
    "cyclic_exp_range": ("sgd", 12, lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode="exp_range",
                                                                  gamma=0.9)),
    "cyclic_no_momentum": ("sgd", 8, lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=2, cycle_momentum=False)),
    "one_cycle": ("sgd", 20, lambda s, o: s.OneCycleLR(o, max_lr=[0.5, 0.2], total_steps=20)),
    "one_cycle_linear_three_adam": ("adam", 15, lambda s, o: s.OneCycleLR(
        o, max_lr=0.3, epochs=3, steps_per_epoch=5, anneal_strategy="linear", three_phase=True, pct_start=0.4)),
}


def run(lib, name: str) -> list:
    """[[lr, ...], [momentum or beta1, ...]] for each group after construction and after
    each step (optimizer.step() first, as the docs say)."""
    kind, steps, make = CASES[name]
    opt = make_optimizer(lib, kind)
    sched = make(lib.optim.lr_scheduler, opt)

    def snapshot():
        groups = opt.param_groups
        moms = [g["betas"][0] if "betas" in g else g["momentum"] for g in groups]
        return [[float(g["lr"]) for g in groups], [float(m) for m in moms]]

    seen = [snapshot()]
    for i in range(steps):
        opt.step()
        if name.startswith("plateau"):
            sched.step(PLATEAU_METRICS[i])
        else:
            sched.step()
        seen.append(snapshot())
    assert all(math.isfinite(v) for s in seen for part in s for v in part)
    return seen
