"""``minitorch.nn``: modules, layers and losses with PyTorch's names."""
from . import functional, init
from .activation import Dropout, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from .container import ModuleList, Sequential
from .linear import Flatten, Identity, Linear
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .module import Module
from .parameter import Parameter

__all__ = [
    "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "Dropout", "Flatten", "Identity", "L1Loss", "Linear",
    "LogSoftmax", "MSELoss", "Module", "ModuleList", "NLLLoss", "Parameter", "ReLU", "Sequential", "Sigmoid",
    "Softmax", "Tanh", "functional", "init",
]
