"""The nn names of wave 3: ``ParameterDict``, ``AlphaDropout``/``FeatureAlphaDropout``,
``RReLU``, ``ChannelShuffle``, ``MultiMarginLoss``, ``MultiLabelMarginLoss``,
``TripletMarginWithDistanceLoss``, ``Softmax2d``, ``LPPool1d/2d``, ``LazyLinear`` /
``LazyConv1d/2d`` with ``UninitializedParameter``, and their functional forms.

Values against NumPy references written here (and a few numbers PyTorch gives), float64
gradchecks of the differentiable functionals, PyTorch's reprs, state_dict keys and errors.
Tiny shapes: the whole file runs in a few seconds."""
from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.nn import functional as F
from minitorch.testing import gradcheck

from conftest import DEVICES

ALPHA_PRIME = 1.7580993408473766  # SELU's scale * alpha


def rand(*shape, low=-2.0, high=2.0, seed=0, dtype=np.float64, device="cpu", requires_grad=False):
    arr = np.random.default_rng(seed).uniform(low, high, size=shape).astype(dtype)
    return minitorch.tensor(arr, device=device, requires_grad=requires_grad)


def npy(t) -> np.ndarray:
    return t.detach().cpu().numpy()


# ---------------------------------------------------------------- ParameterDict ----

def test_parameter_dict_registers_its_values_under_their_keys():
    pd = nn.ParameterDict({"b": nn.Parameter(minitorch.ones(1)), "a": minitorch.zeros(2, 3)})
    assert list(pd.keys()) == ["a", "b"]  # a plain dict is added in sorted order, as PyTorch does
    assert type(pd["a"]) is nn.Parameter and pd["a"].requires_grad  # a plain Tensor is wrapped
    assert list(pd.state_dict()) == ["a", "b"] and pd.a is pd["a"]

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.params = nn.ParameterDict(OrderedDict([("w", minitorch.ones(2)), ("v", minitorch.zeros(1))]))

    model = Model()
    assert list(model.state_dict()) == ["params.w", "params.v"]  # an OrderedDict keeps its order
    assert [n for n, _ in model.named_parameters()] == ["params.w", "params.v"]
    other = Model()
    with minitorch.no_grad():
        other.params["w"].fill_(5.0)
    model.load_state_dict(other.state_dict())
    np.testing.assert_array_equal(npy(model.params["w"]), [5.0, 5.0])


def test_parameter_dict_mapping_methods():
    w = nn.Parameter(minitorch.ones(2))
    pd = nn.ParameterDict([("x", w), ("n", 3)])
    assert len(pd) == 2 and "x" in pd and "y" not in pd and list(pd) == ["x", "n"]
    assert pd["n"] == 3 and list(pd.state_dict()) == ["x"]  # a non-tensor value is kept, not registered
    assert list(pd.values())[0] is w and [k for k, _ in pd.items()] == ["x", "n"]
    assert pd.get("y") is None and pd.get("x") is w
    assert pd.setdefault("x", None) is w
    z = pd.setdefault("z", minitorch.zeros(3))
    assert isinstance(z, nn.Parameter) and list(pd) == ["x", "n", "z"]
    assert list(reversed(pd)) == ["z", "n", "x"]
    assert pd.popitem()[0] == "z" and pd.pop("n") == 3 and list(pd) == ["x"]
    pd.update({"y": minitorch.ones(1)})
    merged = pd | {"q": minitorch.ones(4)}
    assert list(merged) == ["x", "y", "q"] and list(pd) == ["x", "y"] and merged["x"] is w
    copied = pd.copy()
    assert copied["x"] is w and copied is not pd
    del pd["x"]
    assert list(pd) == ["y"] and list(pd.state_dict()) == ["y"]
    pd.clear()
    assert len(pd) == 0 and list(pd.parameters()) == []
    keys = nn.ParameterDict.fromkeys(["a", "b"], w)
    assert list(keys) == ["a", "b"] and keys["a"] is w and len(list(keys.parameters())) == 1


def test_parameter_dict_repr_and_errors():
    pd = nn.ParameterDict()
    pd["x"] = minitorch.ones(2, 3)
    pd["y"] = 3
    assert repr(pd) == ("ParameterDict(\n    (x): Parameter containing: [minitorch.float32 of size 2x3]\n"
                        "    (y): Object of type: int\n)")
    with pytest.raises(TypeError, match="keys must be strings"):
        pd[1] = minitorch.ones(1)
    with pytest.raises(KeyError):
        pd["missing"]
    with pytest.raises(KeyError, match="ParameterDict is empty"):
        nn.ParameterDict().popitem()
    with pytest.raises(TypeError, match="iterable of key/value pairs"):
        pd.update(5)
    with pytest.raises(ValueError, match="element #0 has length 3; 2 is required"):
        pd.update([("a", 1, 2)])
    with pytest.raises(RuntimeError, match="ParameterDict should not be called"):
        pd(minitorch.ones(1))


# ----------------------------------------------------------------- alpha dropout ----

def _alpha_ab(p):
    a = ((1 - p) * (1 + p * ALPHA_PRIME ** 2)) ** -0.5
    return a, a * ALPHA_PRIME * p


def test_alpha_dropout_values_and_gradient():
    p = 0.3
    x = rand(4, 50, requires_grad=True)
    minitorch.manual_seed(0)
    y = F.alpha_dropout(x, p, training=True)
    a, b = _alpha_ab(p)
    kept = np.isclose(npy(y), a * npy(x) + b)
    dropped = np.isclose(npy(y), -a * ALPHA_PRIME + b)
    assert (kept | dropped).all() and 0.15 < dropped.mean() < 0.45
    y.sum().backward()
    np.testing.assert_allclose(npy(x.grad), np.where(kept, a, 0.0))


def test_alpha_dropout_keeps_mean_and_variance():
    minitorch.manual_seed(1)
    x = minitorch.randn(40000)
    y = F.alpha_dropout(x, 0.2, training=True)
    assert abs(y.mean().item()) < 0.03 and abs(y.std().item() - 1.0) < 0.03


def test_alpha_dropout_identity_and_edges():
    x = rand(3, 4, dtype=np.float32)
    assert F.alpha_dropout(x, 0.5) is x  # training defaults to False, as in PyTorch
    assert F.feature_alpha_dropout(x, 0.5, training=False) is x
    assert F.alpha_dropout(x, 0.0, training=True) is x
    np.testing.assert_array_equal(npy(F.alpha_dropout(x, 1.0, training=True)), np.zeros((3, 4)))
    with pytest.raises(ValueError, match="between 0 and 1, but got 1.5"):
        F.alpha_dropout(x, 1.5)
    with pytest.raises(ValueError, match="between 0 and 1, but got -0.1"):
        nn.AlphaDropout(-0.1)
    with pytest.raises(ValueError, match=r"feature_alpha_dropout: feature dropout requires at least 2 dim.*\(3,\)"):
        F.feature_alpha_dropout(minitorch.ones(3), 0.5, training=True)
    with pytest.raises(TypeError, match="alpha_dropout: expected a floating point input, got .*int64"):
        F.alpha_dropout(minitorch.tensor([1, 2]), 0.5, training=True)
    z = x.clone()
    minitorch.manual_seed(2)
    out = F.alpha_dropout(z, 0.5, training=True, inplace=True)
    assert out is z and not np.array_equal(npy(z), npy(x))


def test_feature_alpha_dropout_drops_whole_channels():
    p = 0.5
    minitorch.manual_seed(3)
    x = rand(3, 8, 2, 2, low=0.5, high=1.5)
    y = npy(F.feature_alpha_dropout(x, p, training=True))
    a, b = _alpha_ab(p)
    dropped = np.isclose(y, -a * ALPHA_PRIME + b).all(axis=(2, 3))
    kept = np.isclose(y, a * npy(x) + b).all(axis=(2, 3))
    assert (dropped ^ kept).all() and dropped.any() and kept.any()


def test_alpha_dropout_modules():
    m, f = nn.AlphaDropout(0.2), nn.FeatureAlphaDropout(inplace=True)
    assert repr(m) == "AlphaDropout(p=0.2, inplace=False)" and repr(f) == "FeatureAlphaDropout(p=0.5, inplace=True)"
    x = rand(2, 3, 4, dtype=np.float32)
    minitorch.manual_seed(4)
    assert not np.array_equal(npy(m(x)), npy(x))
    m.eval()
    assert m(x) is x and list(m.state_dict()) == []


# ------------------------------------------------------------------------- RReLU ----

def test_rrelu_eval_is_a_leaky_relu_with_the_mean_slope():
    x = rand(3, 5)
    np.testing.assert_allclose(npy(F.rrelu(x, 0.1, 0.3)), np.where(npy(x) > 0, npy(x), 0.2 * npy(x)))
    m = nn.RReLU(0.1, 0.3).eval()
    np.testing.assert_allclose(npy(m(x)), npy(F.rrelu(x, 0.1, 0.3)))


def test_rrelu_training_draws_a_slope_per_element_and_its_gradient_is_that_slope():
    x = rand(4, 30, requires_grad=True)
    minitorch.manual_seed(5)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    xs, ys = npy(x), npy(y)
    pos = xs > 0
    np.testing.assert_array_equal(ys[pos], xs[pos])
    slopes = ys[~pos] / xs[~pos]
    assert (slopes >= 0.1 - 1e-12).all() and (slopes <= 0.3 + 1e-12).all() and slopes.std() > 0.02
    y.sum().backward()
    np.testing.assert_allclose(npy(x.grad)[~pos], slopes)
    np.testing.assert_array_equal(npy(x.grad)[pos], 1.0)


def test_rrelu_module_inplace_and_errors():
    assert repr(nn.RReLU()) == "RReLU(lower=0.125, upper=0.3333333333333333)"
    assert repr(nn.RReLU(0.1, 0.3, True)) == "RReLU(lower=0.1, upper=0.3, inplace=True)"
    x = minitorch.tensor([-2.0, 1.0])
    out = F.rrelu_(x, 0.5, 0.5, training=True)
    assert out is x
    np.testing.assert_allclose(npy(x), [-1.0, 1.0])
    with pytest.raises(ValueError, match="rrelu: lower bound should be less than or equal to the upper bound"):
        F.rrelu(x, 0.5, 0.2, training=True)


# --------------------------------------------------------------- channel shuffle ----

@pytest.mark.parametrize("device", DEVICES)
def test_channel_shuffle_values(device):
    arr = np.arange(2 * 6 * 2 * 1, dtype=np.float32).reshape(2, 6, 2, 1)
    want = arr.reshape(2, 3, 2, 2, 1).transpose(0, 2, 1, 3, 4).reshape(2, 6, 2, 1)
    x = minitorch.tensor(arr, device=device)
    np.testing.assert_array_equal(npy(F.channel_shuffle(x, 3)), want)
    np.testing.assert_array_equal(npy(nn.ChannelShuffle(3)(x)), want)


def test_channel_shuffle_gradient_repr_and_errors():
    x = rand(1, 4, 3, requires_grad=True)
    assert gradcheck(lambda t: F.channel_shuffle(t, 2), (x,))
    assert repr(nn.ChannelShuffle(2)) == "ChannelShuffle(groups=2)"
    with pytest.raises(RuntimeError, match="number of channels must be divisible by groups, got 4 channels"):
        nn.ChannelShuffle(3)(minitorch.ones(1, 4, 2))
    with pytest.raises(RuntimeError, match="channel_shuffle expects input to have at least 3 dimensions"):
        F.channel_shuffle(minitorch.ones(4, 2), 2)
    with pytest.raises(RuntimeError, match="channel_shuffle expects a positive groups, but got 0"):
        F.channel_shuffle(minitorch.ones(1, 4, 2), 0)


# ------------------------------------------------------------------ margin losses ----

def np_multi_margin(x, y, p, margin, w):
    n, c = x.shape
    out = np.zeros(n)
    for i in range(n):
        for j in range(c):
            if j != y[i]:
                out[i] += max(0.0, margin - x[i, y[i]] + x[i, j]) ** p * (1.0 if w is None else w[y[i]])
    return out / c


def np_multilabel_margin(x, t):
    n, c = x.shape
    out = np.zeros(n)
    for i in range(n):
        listed = []
        for v in t[i]:
            if v < 0:
                break
            listed.append(v)
        for j in listed:
            out[i] += sum(max(0.0, 1 - (x[i, j] - x[i, k])) for k in range(c) if k not in listed)
    return out / c


@pytest.mark.parametrize("device", DEVICES)
def test_margin_losses_match_pytorch_numbers(device):
    # the values PyTorch gives for these inputs
    x = minitorch.tensor([[0.1, 0.2, 0.4, 0.8], [0.5, -0.3, 0.2, 0.1]], device=device)
    w = minitorch.tensor([1.0, 2.0, 3.0, 4.0], device=device)
    y = minitorch.tensor([3, 1], device=device)
    np.testing.assert_allclose(npy(F.multi_margin_loss(x, y, p=2, weight=w, reduction="none")), [0.61, 3.725],
                               rtol=1e-6)
    t = minitorch.tensor([[3, 0, -1, 1], [1, 2, 3, -1]], device=device)
    np.testing.assert_allclose(npy(F.multilabel_margin_loss(x, t, reduction="none")), [0.85, 1.125], rtol=1e-6)


@pytest.mark.parametrize("p,margin,weighted,reduction", [(1, 1.0, False, "mean"), (2, 0.7, True, "none"),
                                                         (1, 1.5, True, "sum")])
def test_multi_margin_loss_values_and_gradients(p, margin, weighted, reduction):
    x = rand(4, 5, low=-1.0, high=1.0, seed=p, requires_grad=True)
    y = minitorch.tensor([0, 3, 4, 3])
    w = rand(5, low=0.5, high=2.0, seed=7) if weighted else None
    want = np_multi_margin(npy(x), npy(y), p, margin, None if w is None else npy(w))
    want = {"none": want, "mean": want.mean(), "sum": want.sum()}[reduction]
    got = F.multi_margin_loss(x, y, p=p, margin=margin, weight=w, reduction=reduction)
    np.testing.assert_allclose(npy(got), want, rtol=1e-12)
    assert gradcheck(lambda t: F.multi_margin_loss(t, y, p, margin, w, reduction=reduction), (x,))
    module = nn.MultiMarginLoss(p, margin, w, reduction=reduction)
    np.testing.assert_allclose(npy(module(x, y)), want, rtol=1e-12)


def test_multi_margin_loss_shapes_module_and_errors():
    x, y = rand(4), minitorch.tensor(2)
    assert F.multi_margin_loss(x, y, reduction="none").shape == ()  # unbatched, 0-d target
    assert F.multi_margin_loss(x, minitorch.tensor([2]), reduction="none").shape == (1,)
    w = minitorch.ones(4)
    m = nn.MultiMarginLoss(weight=w)
    assert repr(m) == "MultiMarginLoss()" and list(m.state_dict()) == ["weight"]
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        F.multi_margin_loss(rand(2, 4), minitorch.tensor([0, 1]), p=3)
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(ValueError, match="expected weight to be None or 1D tensor, got 2D instead"):
        nn.MultiMarginLoss(weight=minitorch.ones(2, 2))
    with pytest.raises(ValueError, match=r"target out of range: got class 4, expected values in \[0, 4\)"):
        F.multi_margin_loss(rand(2, 4), minitorch.tensor([0, 4]))
    with pytest.raises(ValueError, match=r"inconsistent target size: \(3,\) for input of shape \(2, 4\)"):
        F.multi_margin_loss(rand(2, 4), minitorch.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match=r"inconsistent weight size, expected 4 .* got \(3,\)"):
        F.multi_margin_loss(rand(2, 4), minitorch.tensor([0, 1]), weight=minitorch.ones(3))
    with pytest.raises(TypeError, match="target of dtype int64"):
        F.multi_margin_loss(rand(2, 4), minitorch.tensor([0.0, 1.0]))


def test_multilabel_margin_loss_values_gradients_and_errors():
    x = rand(3, 4, low=-1.0, high=1.0, seed=3, requires_grad=True)
    t = minitorch.tensor([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 2, 2, 2]])  # all listed / none listed
    want = np_multilabel_margin(npy(x), npy(t))
    np.testing.assert_allclose(npy(F.multilabel_margin_loss(x, t, reduction="none")), want, rtol=1e-12)
    np.testing.assert_allclose(npy(nn.MultiLabelMarginLoss()(x, t)), want.mean(), rtol=1e-12)
    assert gradcheck(lambda v: F.multilabel_margin_loss(v, t, reduction="sum"), (x,))
    assert F.multilabel_margin_loss(x[0], t[0], reduction="none").shape == ()
    assert repr(nn.MultiLabelMarginLoss()) == "MultiLabelMarginLoss()"
    with pytest.raises(ValueError, match=r"target out of range: got class -2, expected values in \[-1, 4\)"):
        F.multilabel_margin_loss(x, minitorch.tensor([[-2, 0, 1, 1]] * 3))
    with pytest.raises(ValueError, match=r"inconsistent target size: \(3, 3\) for input of shape \(3, 4\)"):
        F.multilabel_margin_loss(x, minitorch.zeros(3, 3).long())
    with pytest.raises(ValueError, match="reduction must be 'none', 'mean' or 'sum'"):
        F.multilabel_margin_loss(x, t, reduction="batchmean")


def test_triplet_margin_with_distance_loss():
    a, p, n = (rand(3, 4, seed=s, requires_grad=True) for s in (1, 2, 3))
    plain = F.triplet_margin_loss(a, p, n, margin=0.5, reduction="none")
    np.testing.assert_allclose(npy(F.triplet_margin_with_distance_loss(a, p, n, margin=0.5, reduction="none")),
                               npy(plain), rtol=1e-12)

    def cos_dist(u, v):
        return 1.0 - F.cosine_similarity(u, v)

    A, P, N = npy(a), npy(p), npy(n)

    def np_cos(u, v):
        return 1 - (u * v).sum(1) / np.maximum(np.linalg.norm(u, axis=1) * np.linalg.norm(v, axis=1), 1e-16)

    want = np.maximum(np_cos(A, P) - np.minimum(np_cos(A, N), np_cos(P, N)) + 1.2, 0.0).sum()
    got = F.triplet_margin_with_distance_loss(a, p, n, distance_function=cos_dist, margin=1.2, swap=True,
                                              reduction="sum")
    np.testing.assert_allclose(npy(got), want, rtol=1e-10)
    m = nn.TripletMarginWithDistanceLoss(distance_function=cos_dist, margin=1.2, swap=True, reduction="sum")
    np.testing.assert_allclose(npy(m(a, p, n)), want, rtol=1e-10)
    assert gradcheck(lambda u, v, w: F.triplet_margin_with_distance_loss(u, v, w, distance_function=cos_dist,
                                                                         margin=1.2, swap=True), (a, p, n))
    assert repr(nn.TripletMarginWithDistanceLoss()) == \
        "TripletMarginWithDistanceLoss(\n  (distance_function): PairwiseDistance()\n)"
    assert repr(m) == "TripletMarginWithDistanceLoss()" and list(m.state_dict()) == []
    with pytest.raises(ValueError, match="expected margin to be greater than 0, got 0"):
        nn.TripletMarginWithDistanceLoss(margin=0)
    with pytest.raises(ValueError, match="margin must be greater than 0, got -1"):
        F.triplet_margin_with_distance_loss(a, p, n, margin=-1)
    with pytest.raises(ValueError, match="anchor 2D, positive 1D, and negative 2D"):
        F.triplet_margin_with_distance_loss(a, p[0], n)


# ---------------------------------------------------------- Softmax2d, LP pooling ----

def test_softmax2d():
    x = rand(2, 3, 2, 2)
    e = np.exp(npy(x))
    np.testing.assert_allclose(npy(nn.Softmax2d()(x)), e / e.sum(1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(npy(nn.Softmax2d()(x[0])), e[0] / e[0].sum(0, keepdims=True), rtol=1e-12)
    assert repr(nn.Softmax2d()) == "Softmax2d()"
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D instead"):
        nn.Softmax2d()(minitorch.ones(2, 3))


def np_lp_pool2d(x, p, k, s):
    n, c, h, w = x.shape
    oh, ow = (h - k[0]) // s[0] + 1, (w - k[1]) // s[1] + 1
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = x[:, :, i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]]
            out[:, :, i, j] = (win ** p).sum((2, 3)) ** (1.0 / p)
    return out


@pytest.mark.parametrize("device", DEVICES)
def test_lp_pool2d_values(device):
    x = rand(1, 2, 4, 5, low=0.1, high=2.0, dtype=np.float32, device=device)
    np.testing.assert_allclose(npy(F.lp_pool2d(x, 2, (2, 3), (1, 2))), np_lp_pool2d(npy(x), 2, (2, 3), (1, 2)),
                               rtol=1e-5)


@pytest.mark.parametrize("p", [1, 2, 3.5])
def test_lp_pool_values_and_gradients(p):
    x = rand(2, 2, 4, 4, low=0.1, high=2.0, requires_grad=True)
    np.testing.assert_allclose(npy(F.lp_pool2d(x, p, 2)), np_lp_pool2d(npy(x), p, (2, 2), (2, 2)), rtol=1e-12)
    assert gradcheck(lambda t: F.lp_pool2d(t, p, 2, 1), (x,))
    x1 = rand(2, 3, 7, low=0.1, high=2.0, seed=1, requires_grad=True)
    want = np_lp_pool2d(npy(x1)[:, :, None, :], p, (1, 3), (1, 2))[:, :, 0, :]
    np.testing.assert_allclose(npy(nn.LPPool1d(p, 3, 2)(x1)), want, rtol=1e-12)
    assert gradcheck(lambda t: F.lp_pool1d(t, p, 3, 2), (x1,))


def test_lp_pool_shapes_and_reprs():
    assert F.lp_pool1d(rand(3, 7, low=0.1), 2, 3).shape == (3, 2)  # unbatched
    assert F.lp_pool2d(rand(1, 1, 5, 5, low=0.1), 2, 2, ceil_mode=True).shape == (1, 1, 3, 3)
    assert repr(nn.LPPool1d(2, 3)) == "LPPool1d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)"
    assert repr(nn.LPPool2d(1.5, (2, 3), 1, True)) == \
        "LPPool2d(norm_type=1.5, kernel_size=(2, 3), stride=1, ceil_mode=True)"
    with pytest.raises(ValueError, match="lp_pool2d: norm_type must be nonzero"):
        F.lp_pool2d(rand(1, 1, 4, 4), 0, 2)


# ------------------------------------------------------------------- lazy layers ----

def test_uninitialized_parameter():
    u = nn.UninitializedParameter()
    assert repr(u) == "<UninitializedParameter>" and u.requires_grad and isinstance(u, nn.Parameter)
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        u.shape
    u.materialize((2, 3), dtype=minitorch.float64)
    assert type(u) is nn.Parameter and tuple(u.shape) == (2, 3) and u.dtype == minitorch.float64
    assert u.requires_grad and u.is_leaf


def test_lazy_linear_becomes_a_linear():
    minitorch.manual_seed(0)
    m = nn.LazyLinear(3)
    assert repr(m) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    sd = m.state_dict()
    assert list(sd) == ["weight", "bias"] and all(isinstance(v, nn.UninitializedParameter) for v in sd.values())
    assert list(nn.LazyLinear(3, bias=False).state_dict()) == ["weight"]
    opt = minitorch.optim.SGD(m.parameters(), lr=0.1)  # made before the sizes are known, as PyTorch allows
    x = rand(4, 5, dtype=np.float32)
    out = m(x)
    assert type(m) is nn.Linear and repr(m) == "Linear(in_features=5, out_features=3, bias=True)"
    assert tuple(m.weight.shape) == (3, 5) and tuple(out.shape) == (4, 3)
    assert np.abs(npy(m.weight)).max() <= 1 / math.sqrt(5)  # Linear's U(-1/sqrt(in), 1/sqrt(in))
    np.testing.assert_allclose(npy(out), npy(x) @ npy(m.weight).T + npy(m.bias), rtol=1e-5, atol=1e-6)
    assert list(m.state_dict()) == list(nn.Linear(5, 3).state_dict())
    before = npy(m.weight).copy()
    m(x).sum().backward()
    opt.step()
    np.testing.assert_allclose(npy(m.weight), before - 0.1 * npy(x).sum(0)[None, :].repeat(3, 0), rtol=1e-5)


def test_a_deep_copy_of_a_lazy_layer_initializes_on_its_own():
    import copy

    m = nn.LazyLinear(2)
    twin = copy.deepcopy(m)
    twin(minitorch.ones(1, 3))
    assert type(twin) is nn.Linear and type(m) is nn.LazyLinear and twin.in_features == 3
    twin(minitorch.ones(1, 3))  # the hook is gone: a second call is a plain Linear's
    m(minitorch.ones(2, 4))
    assert m.in_features == 4 and not m.__dict__.get("_forward_pre_hooks")


def test_lazy_linear_loads_a_checkpoint():
    src = nn.Linear(5, 3)
    m = nn.LazyLinear(3)
    m.load_state_dict(src.state_dict())
    assert tuple(m.weight.shape) == (3, 5) and m.in_features == 5 and not m.has_uninitialized_params()
    np.testing.assert_array_equal(npy(m.weight), npy(src.weight))
    x = rand(2, 5, dtype=np.float32)
    np.testing.assert_array_equal(npy(m(x)), npy(src(x)))
    assert type(m) is nn.Linear
    with pytest.raises(RuntimeError, match=r"size mismatch for weight: copying a param with shape \(3, 5\) from "
                                           r"checkpoint, the shape in current model is \(4, \?\)"):
        nn.LazyLinear(4).load_state_dict(src.state_dict())
    conv = nn.LazyConv2d(2, 3)
    conv.load_state_dict(nn.Conv2d(4, 2, 3).state_dict())
    assert conv.in_channels == 4 and repr(conv) == "LazyConv2d(4, 2, kernel_size=(3, 3), stride=(1, 1))"


def test_lazy_convolutions():
    conv = nn.LazyConv2d(4, 3, padding=1, groups=2)
    assert repr(conv) == "LazyConv2d(0, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), groups=2)"
    x = rand(1, 6, 4, 4, dtype=np.float32)
    out = conv(x)
    assert type(conv) is nn.Conv2d and tuple(conv.weight.shape) == (4, 3, 3, 3) and conv.in_channels == 6
    np.testing.assert_array_equal(npy(out), npy(F.conv2d(x, conv.weight, conv.bias, padding=1, groups=2)))
    c1 = nn.LazyConv1d(2, 2, bias=False)
    assert tuple(c1(rand(3, 5, dtype=np.float32)).shape) == (2, 4)  # unbatched: channels from dim 0
    assert type(c1) is nn.Conv1d and c1.in_channels == 3 and list(c1.state_dict()) == ["weight"]
    with pytest.raises(ValueError, match=r"LazyConv2d: expected 3D \(unbatched\) or 4D \(batched\) input"):
        nn.LazyConv2d(2, 3)(minitorch.ones(2, 2))
    with pytest.raises(ValueError, match="must be a positive multiple of groups=2"):
        nn.LazyConv2d(2, 1, groups=2)(minitorch.ones(1, 3, 2, 2))
