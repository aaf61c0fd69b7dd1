"""PyTorch's argument parser takes NumPy's names too: ``axis=`` for ``dim=`` and ``keepdims=``
for ``keepdim=`` (d2l writes ``y_hat.argmax(axis=1)``). Checked on the reductions, methods
(C++ and Python) and functions alike, against the dim= spelling."""
from __future__ import annotations

import pytest

import minitorch
import minitorch.nn.functional as F

REDUCTIONS = ["sum", "mean", "max", "min", "argmax", "argmin", "std", "var", "prod", "any", "all",
              "amax", "amin", "logsumexp", "nansum", "median"]


def _same(a, b):
    if isinstance(a, tuple):
        return all(_same(x, y) for x, y in zip(a, b))
    return a.shape == b.shape and minitorch.equal(a, b)


@pytest.mark.parametrize("name", REDUCTIONS)
def test_axis_and_keepdims_are_dim_and_keepdim(device, name):
    x = minitorch.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]], device=device)
    if name in ("any", "all"):
        x = x > 2
    for form in (getattr(x, name), lambda **kw: getattr(minitorch, name)(x, **kw)):
        assert _same(form(axis=1), form(dim=1)), name
        assert _same(form(axis=0, keepdims=True), form(dim=0, keepdim=True)), name
        assert _same(form(dim=1, keepdims=True), form(dim=1, keepdim=True)), name


def test_axis_on_other_ops(device):
    x = minitorch.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]], device=device)
    assert _same(x.softmax(axis=1), x.softmax(1))
    assert _same(minitorch.log_softmax(x, axis=0), minitorch.log_softmax(x, 0))
    assert _same(F.softmax(x, axis=1), F.softmax(x, dim=1))
    assert _same(minitorch.cumsum(x, axis=1), x.cumsum(1))
    assert _same(minitorch.cat([x, x], axis=1), minitorch.cat([x, x], 1))
    assert _same(x.sort(axis=1), x.sort(1))
    assert x.unsqueeze(axis=1).shape == (2, 1, 3) and minitorch.unsqueeze(x, axis=0).shape == (1, 2, 3)
    assert x[:1].squeeze(axis=0).shape == (3,)


def test_dim_and_axis_together_or_unknown_keywords_are_type_errors():
    x = minitorch.ones(2, 3)
    for f in (x.sum, x.argmax, x.std, lambda **kw: minitorch.sum(x, **kw)):
        with pytest.raises(TypeError, match="multiple values"):
            f(dim=0, axis=1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'dims'"):
        x.sum(dims=0)
    with pytest.raises(TypeError, match="multiple values"):
        x.sum(0, axis=1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'keepdims'"):
        x.unsqueeze(0, keepdims=True)
    with pytest.raises(TypeError, match="missing required argument 'dim'"):
        x.unsqueeze()
