"""``InstanceNorm1d/2d/3d``: normalise each channel of each sample over its spatial dims
(style transfer, GAN generators). Unlike BatchNorm, by default no affine parameters and no
running statistics (``affine=False``, ``track_running_stats=False``), as in PyTorch; with
``track_running_stats=True`` the running statistics are kept while training and used in
``eval()``.
"""
from __future__ import annotations

import warnings

from . import functional as F
from .batchnorm import _BatchNorm


class _InstanceNorm(_BatchNorm):
    _no_batch_dim = 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

    def _check_input_dim(self, x) -> None:
        d = self._no_batch_dim
        if x.dim() not in (d, d + 1):
            raise ValueError(f"{type(self).__name__}: expected {d}D or {d + 1}D input (got {x.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"{type(self).__name__}: expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: {input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        unbatched = input.dim() == self._no_batch_dim
        x = input.unsqueeze(0) if unbatched else input
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats, self.momentum, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance norm of (N, C, L) or (C, L) input."""

    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance norm of (N, C, H, W) or (C, H, W) input."""

    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """Instance norm of (N, C, D, H, W) or (C, D, H, W) input."""

    _no_batch_dim = 4
