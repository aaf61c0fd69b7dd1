"""``minitorch.nn``: modules, layers and losses with PyTorch's names."""
from . import functional, init, utils
from . import parallel  # noqa: F401  (DistributedDataParallel)
from .parallel import DataParallel
from .loss import CTCLoss
from .sync_batchnorm import SyncBatchNorm
from .activation import (
    ELU,
    GELU,
    Dropout,
    Dropout1d,
    Dropout2d,
    Dropout3d,
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
from .normalization import GroupNorm, LayerNorm, RMSNorm
from .parameter import Parameter
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from .sparse import Embedding
from .attention import MultiheadAttention
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .transformer import TransformerEncoder, TransformerEncoderLayer
# resampling, more pooling, pixel shuffle, instance/local response norm, EmbeddingBag
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d,
                      AvgPool1d, MaxPool1d, MaxUnpool1d, MaxUnpool2d)
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .normalization import LocalResponseNorm
from .sparse import EmbeddingBag
# convolution features: groups, transposed convolutions, fold/unfold
from .conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .fold import Fold, Unfold
from .transformer import Transformer, TransformerDecoder, TransformerDecoderLayer
# wave 3: SELU's dropout, RReLU, channel shuffle, margin losses, LP pooling, ParameterDict, lazy layers
from .activation import AlphaDropout, FeatureAlphaDropout, RReLU, Softmax2d
from .pixelshuffle import ChannelShuffle
from .loss import MultiLabelMarginLoss, MultiMarginLoss, TripletMarginWithDistanceLoss
from .pooling import LPPool1d, LPPool2d
from .container import ParameterDict
from .parameter import UninitializedParameter
from .linear import LazyLinear
from .conv import LazyConv1d, LazyConv2d
from .conv import Conv3d, LazyConv3d
from .pooling import AvgPool3d, MaxPool3d
from . import lazy  # noqa: F401  (LazyModuleMixin)
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d,
                      ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d,
                      ReplicationPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d)

__all__ = [
    "AdaptiveAvgPool2d", "AvgPool2d", "Conv1d", "Conv2d", "MaxPool2d",
    "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "Dropout", "Flatten", "Identity", "L1Loss", "Linear",
    "LogSoftmax", "MSELoss", "Module", "ModuleList", "NLLLoss", "Parameter", "ReLU", "Sequential", "Sigmoid",
    "Softmax", "Tanh", "functional", "init",
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "Dropout1d", "Dropout2d", "ELU", "Embedding", "GELU", "GroupNorm",
    "LayerNorm", "RMSNorm", "LeakyReLU", "ModuleDict", "ParameterList", "SiLU", "Softplus", "utils",
    "MultiheadAttention", "GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase",
    "TransformerEncoder", "TransformerEncoderLayer",
    "CELU", "GLU", "SELU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "LogSigmoid", "Mish", "PReLU",
    "ReLU6", "Softmin", "Softshrink", "Softsign", "Tanhshrink", "Threshold", "Unflatten",
    "Bilinear", "CosineEmbeddingLoss", "CosineSimilarity", "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss",
    "KLDivLoss", "MarginRankingLoss", "MultiLabelSoftMarginLoss", "PairwiseDistance", "PoissonNLLLoss",
    "SmoothL1Loss", "SoftMarginLoss", "TripletMarginLoss",
    "AdaptiveAvgPool1d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AvgPool1d", "MaxPool1d", "MaxUnpool1d",
    "MaxUnpool2d", "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d", "PixelShuffle", "PixelUnshuffle",
    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LocalResponseNorm",
    "EmbeddingBag", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d",
    "ConvTranspose1d", "ConvTranspose2d", "Fold", "Unfold",
    "Transformer", "TransformerDecoder", "TransformerDecoderLayer",
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
    "AlphaDropout", "FeatureAlphaDropout", "RReLU", "Softmax2d", "ChannelShuffle", "MultiLabelMarginLoss",
    "MultiMarginLoss", "TripletMarginWithDistanceLoss", "LPPool1d", "LPPool2d", "ParameterDict",
    "UninitializedParameter", "LazyLinear", "LazyConv1d", "LazyConv2d",
    "Conv3d", "LazyConv3d", "AvgPool3d", "MaxPool3d", "DataParallel", "Dropout3d", "CTCLoss", "SyncBatchNorm", "ConvTranspose3d",
]
