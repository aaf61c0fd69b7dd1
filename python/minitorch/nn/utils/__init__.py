"""``minitorch.nn.utils``: gradient clipping, parameters as one vector, BatchNorm folded
into the layer before it, (in ``rnn``) sequence padding, and (``parametrize``,
``parametrizations``, ``weight_norm``) tensors computed from others; (``prune``) masks that
zero weights."""
from . import rnn
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights
from . import parametrizations, parametrize
from .weight_norm import remove_weight_norm, weight_norm
from . import prune

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
           "parameters_to_vector", "vector_to_parameters",
           "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights", "rnn",
           "parametrizations", "parametrize", "remove_weight_norm", "weight_norm",
           "prune"]
