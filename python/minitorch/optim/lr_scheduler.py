"""Learning-rate schedules (PyTorch's names): call ``scheduler.step()`` after ``optimizer.step()``."""
from __future__ import annotations

import math


class LRScheduler:
    """Base: remembers each group's initial lr and sets ``lr = get_lr()`` on every ``step()``."""

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.base_lrs = [g["lr"] for g in optimizer.param_groups]
        self.last_epoch = 0

    def get_lr(self) -> list:
        raise NotImplementedError

    def step(self) -> None:
        self.last_epoch += 1
        for g, lr in zip(self.optimizer.param_groups, self.get_lr()):
            g["lr"] = lr

    def get_last_lr(self) -> list:
        return [g["lr"] for g in self.optimizer.param_groups]

    def state_dict(self) -> dict:
        """Everything but the optimizer (PyTorch's rule), for checkpoints."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)


class CosineAnnealingLR(LRScheduler):
    """lr follows half a cosine from its initial value down to ``eta_min`` over ``T_max`` steps."""

    def __init__(self, optimizer, T_max: int, eta_min: float = 0.0):  # noqa: N803 (PyTorch's name)
        if T_max <= 0:
            raise ValueError(f"CosineAnnealingLR: T_max must be positive, got {T_max}")
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer)

    def get_lr(self) -> list:
        t = min(self.last_epoch, self.T_max)
        return [self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * t / self.T_max)) / 2
                for base in self.base_lrs]


class StepLR(LRScheduler):
    """lr is multiplied by ``gamma`` every ``step_size`` steps."""

    def __init__(self, optimizer, step_size: int, gamma: float = 0.1):
        if step_size <= 0:
            raise ValueError(f"StepLR: step_size must be positive, got {step_size}")
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer)

    def get_lr(self) -> list:
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]
