"""``minitorch.optim``: optimizers that update parameters in place."""
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .sgd import SGD
from . import lr_scheduler

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "lr_scheduler"]
