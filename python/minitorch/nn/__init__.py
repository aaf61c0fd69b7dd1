"""``minitorch.nn``: modules, layers and losses with PyTorch's names."""
from . import functional, init, utils
from . import parallel  # noqa: F401  (DistributedDataParallel)
from .activation import (
    ELU,
    GELU,
    Dropout,
    Dropout1d,
    Dropout2d,
    LeakyReLU,
    LogSoftmax,
    ReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Softplus,
    Tanh,
)
from .activation import (  # the activations of nn/_activation_functional.py
    CELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LogSigmoid, Mish, PReLU, ReLU6, Softmin,
    Softshrink, Softsign, Tanhshrink, Threshold)
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .container import ModuleDict, ModuleList, ParameterList, Sequential
from .conv import Conv1d, Conv2d
from .linear import Flatten, Identity, Linear, Unflatten
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .linear import Bilinear
from .loss import (CosineEmbeddingLoss, GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss, KLDivLoss, MarginRankingLoss,
                   MultiLabelSoftMarginLoss, PoissonNLLLoss, SmoothL1Loss, SoftMarginLoss, TripletMarginLoss)
from .distance import CosineSimilarity, PairwiseDistance
from .module import Module
from .normalization import GroupNorm, LayerNorm
from .parameter import Parameter
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from .sparse import Embedding
from .attention import MultiheadAttention
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .transformer import TransformerEncoder, TransformerEncoderLayer
from .transformer import Transformer, TransformerDecoder, TransformerDecoderLayer

__all__ = [
    "AdaptiveAvgPool2d", "AvgPool2d", "Conv1d", "Conv2d", "MaxPool2d",
    "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "Dropout", "Flatten", "Identity", "L1Loss", "Linear",
    "LogSoftmax", "MSELoss", "Module", "ModuleList", "NLLLoss", "Parameter", "ReLU", "Sequential", "Sigmoid",
    "Softmax", "Tanh", "functional", "init",
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "Dropout1d", "Dropout2d", "ELU", "Embedding", "GELU", "GroupNorm",
    "LayerNorm", "LeakyReLU", "ModuleDict", "ParameterList", "SiLU", "Softplus", "utils",
    "MultiheadAttention", "GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase",
    "TransformerEncoder", "TransformerEncoderLayer",
    "CELU", "GLU", "SELU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "LogSigmoid", "Mish", "PReLU",
    "ReLU6", "Softmin", "Softshrink", "Softsign", "Tanhshrink", "Threshold", "Unflatten",
    "Bilinear", "CosineEmbeddingLoss", "CosineSimilarity", "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss",
    "KLDivLoss", "MarginRankingLoss", "MultiLabelSoftMarginLoss", "PairwiseDistance", "PoissonNLLLoss",
    "SmoothL1Loss", "SoftMarginLoss", "TripletMarginLoss",
    "Transformer", "TransformerDecoder", "TransformerDecoderLayer",
]
