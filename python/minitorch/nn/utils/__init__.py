"""``minitorch.nn.utils``: gradient clipping, (in ``rnn``) sequence padding, and
(``parametrize``, ``parametrizations``, ``weight_norm``) tensors computed from others;
(``prune``) masks that zero weights."""
from . import rnn
from .clip_grad import clip_grad_norm_, clip_grad_value_
from . import parametrizations, parametrize
from .weight_norm import remove_weight_norm, weight_norm
from . import prune

__all__ = ["clip_grad_norm_", "clip_grad_value_", "rnn",
           "parametrizations", "parametrize", "remove_weight_norm", "weight_norm",
           "prune"]
