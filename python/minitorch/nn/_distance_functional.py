"""``F.pairwise_distance`` and ``F.bilinear`` as tensor ops (autograd differentiates them
through ``norm`` and ``einsum``)."""
from __future__ import annotations

from .. import _C
from ..ops.linalg import einsum


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    """The p-norm of ``x1 - x2 + eps`` along the last dim of their broadcast shape: the
    distance between corresponding rows (``eps`` keeps the norm's gradient finite when two
    rows are equal).

    >>> F.pairwise_distance(minitorch.tensor([[0.0, 0.0]]), minitorch.tensor([[3.0, 4.0]]), eps=0.0)
    tensor([5.])
    """
    for name, t in (("x1", x1), ("x2", x2)):
        if not isinstance(t, _C.Tensor):
            raise TypeError(f"pairwise_distance: {name} must be a Tensor, got {type(t).__name__}")
    diff = x1 - x2 + eps
    if diff.dim() == 0:  # one element: its norm is its absolute value (for every p > 0)
        return diff.abs() if p != 0 else (diff != 0).to(diff.dtype)
    return diff.norm(p, -1, keepdim)


def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]``.

    ``input1`` (*, in1), ``input2`` (*, in2) with the same leading dims, ``weight``
    (out, in1, in2), ``bias`` (out,); the result is (*, out).

    >>> w = minitorch.ones(1, 2, 3)
    >>> F.bilinear(minitorch.ones(4, 2), minitorch.ones(4, 3), w).shape
    minitorch.Size([4, 1])
    """
    op = "bilinear"
    if input1.dim() != input2.dim():
        raise ValueError(f"{op}: input dimensions do not match: got {input1.dim()} and {input2.dim()} (shapes "
                         f"{tuple(input1.shape)} and {tuple(input2.shape)})")
    if input1.dim() == 0 or tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise ValueError(f"{op}: input batch dimensions do not match: got {tuple(input1.shape)} and "
                         f"{tuple(input2.shape)}")
    if weight.dim() != 3:
        raise ValueError(f"{op}: expected a 3-D weight (out_features, in1_features, in2_features), got shape "
                         f"{tuple(weight.shape)}")
    if input1.shape[-1] != weight.shape[1]:
        raise ValueError(f"{op}: input1 size does not match weight size: got {input1.shape[-1]} but expected "
                         f"{weight.shape[1]} (weight of shape {tuple(weight.shape)})")
    if input2.shape[-1] != weight.shape[2]:
        raise ValueError(f"{op}: input2 size does not match weight size: got {input2.shape[-1]} but expected "
                         f"{weight.shape[2]} (weight of shape {tuple(weight.shape)})")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != weight.shape[0]):
        raise ValueError(f"{op}: bias size does not match weight size: got bias of shape {tuple(bias.shape)} but "
                         f"expected ({weight.shape[0]},)")
    out = einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias
