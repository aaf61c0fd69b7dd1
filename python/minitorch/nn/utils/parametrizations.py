"""``nn.utils.parametrizations``: ``weight_norm`` and ``spectral_norm`` as parametrizations
(``nn.utils.parametrize``), with PyTorch's state_dict keys:

* ``weight_norm``: ``parametrizations.weight.original0`` (g, the norms) and
  ``parametrizations.weight.original1`` (v, the direction); ``weight = g * v / ||v||``.
* ``spectral_norm``: ``parametrizations.weight.original`` and the power iteration's
  vectors ``parametrizations.weight.0._u`` / ``._v``; ``weight = W / sigma(W)``.
"""
from __future__ import annotations

from ... import _C
from ...autograd import no_grad
from .. import functional as F
from ..module import Module
from .parametrize import register_parametrization

__all__ = ["spectral_norm", "weight_norm"]


def _norm_except_dim(v, dim: int):
    """The 2-norm of ``v`` over every dim but ``dim`` (kept, size 1 elsewhere); over all of
    ``v`` when ``dim == -1``."""
    if dim == -1:
        return (v * v).sum().sqrt()
    dims = [d for d in range(v.dim()) if d != dim]
    return (v * v).sum(dims, keepdim=True).sqrt() if dims else v.abs()


def _weight_norm(v, g, dim: int):
    """``v * g / ||v||`` (PyTorch's ``torch._weight_norm``)."""
    return v * (g / _norm_except_dim(v, dim))


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Weight normalization (Salimans & Kingma 2016): ``module.<name>`` becomes
    ``g * v / ||v||`` with the norm over every dim but ``dim`` (one norm per output unit
    for ``dim=0``; one for the whole tensor with ``dim=None``). g and v are the learned
    parameters ``parametrizations.<name>.original0`` and ``.original1``.

    >>> m = weight_norm(minitorch.nn.Linear(20, 40))
    >>> tuple(m.parametrizations.weight.original0.shape), tuple(m.parametrizations.weight.original1.shape)
    ((40, 1), (40, 20))
    """
    if dim is not None and dim < -1:
        dim += getattr(module, name).dim()
    register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    """``W / sigma`` with sigma, W's largest singular value, estimated by power iteration
    on W as a matrix (``dim`` first, the rest flattened): ``n_power_iterations`` steps per
    forward in training, ``u`` and ``v`` kept as buffers between calls."""

    def __init__(self, weight, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12):
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got n_power_iterations="
                             f"{n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = weight_mat.new_empty((h,)).normal_(0, 1)
            v = weight_mat.new_empty((w,)).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations: int) -> None:
        # u <- normalize(W v), v <- normalize(W^T u), written into the buffers in place
        with no_grad():
            weight_mat = weight_mat.detach()
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(weight_mat @ self._v, dim=0, eps=self.eps))
                self._v.copy_(F.normalize(weight_mat.transpose(0, 1) @ self._u, dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.dim() == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()  # constants for the gradient
        sigma = (u * (weight_mat @ v)).sum()
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """Spectral normalization (Miyato et al. 2018, for GAN discriminators): ``module.<name>``
    becomes ``W / sigma(W)``, sigma estimated by ``n_power_iterations`` power-iteration
    steps at each training forward. ``dim`` (the output dim) defaults to 1 for
    ConvTranspose layers and 0 otherwise.

    >>> m = spectral_norm(minitorch.nn.Linear(20, 40))
    >>> tuple(m.parametrizations.weight.original.shape), tuple(m.parametrizations.weight[0]._u.shape)
    ((40, 20), (40,))
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, _C.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if type(module).__name__ in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d") else 0
    register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
