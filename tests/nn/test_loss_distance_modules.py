"""The loss modules beyond cross-entropy/MSE/L1/BCE, ``nn.PairwiseDistance``,
``nn.CosineSimilarity`` and ``nn.Bilinear``: each calls its functional op with its settings,
prints as PyTorch prints it, keeps PyTorch's state_dict keys and refuses bad arguments.
(The functional ops' values and gradients are checked by the OpInfo battery.)"""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.nn import functional as F


def rand(device, *shape, low=-2.0, high=2.0, seed=0):
    arr = np.random.default_rng(seed).uniform(low, high, size=shape).astype(np.float32)
    return minitorch.tensor(arr, device=device)


def signs(device, *shape, seed=1):
    return minitorch.tensor(np.random.default_rng(seed).choice([-1.0, 1.0], size=shape).astype(np.float32),
                            device=device)


def same(a, b):
    np.testing.assert_array_equal(a.detach().cpu().numpy(), b.detach().cpu().numpy())


def _cases(device):
    """(module, its inputs, the functional call it must equal)."""
    x, y, z = rand(device, 3, 4), rand(device, 3, 4, seed=1), rand(device, 3, 4, seed=2)
    probs, pos = rand(device, 3, 4, low=0.05, high=1.0, seed=3), rand(device, 3, 4, low=0.5, high=2.0, seed=4)
    t4, t3 = signs(device, 3, 4), signs(device, 3)
    w = rand(device, 4, low=0.5, high=2.0, seed=5)
    return [
        (nn.KLDivLoss(reduction="batchmean", log_target=False), (x, probs),
         lambda: F.kl_div(x, probs, reduction="batchmean")),
        (nn.SmoothL1Loss(reduction="sum", beta=0.5), (x, y), lambda: F.smooth_l1_loss(x, y, "sum", 0.5)),
        (nn.HuberLoss("none", delta=0.7), (x, y), lambda: F.huber_loss(x, y, "none", 0.7)),
        (nn.SoftMarginLoss(reduction="sum"), (x, t4), lambda: F.soft_margin_loss(x, t4, "sum")),
        (nn.MarginRankingLoss(0.3), (x, y, t4), lambda: F.margin_ranking_loss(x, y, t4, 0.3)),
        (nn.HingeEmbeddingLoss(0.5, reduction="none"), (pos, t4), lambda: F.hinge_embedding_loss(pos, t4, 0.5, "none")),
        (nn.CosineEmbeddingLoss(-0.2), (x, y, t3), lambda: F.cosine_embedding_loss(x, y, t3, -0.2)),
        (nn.TripletMarginLoss(0.5, 1.0, 1e-3, True, reduction="none"), (x, y, z),
         lambda: F.triplet_margin_loss(x, y, z, 0.5, 1.0, 1e-3, True, "none")),
        (nn.PoissonNLLLoss(False, True, eps=1e-4), (pos, probs * 4),
         lambda: F.poisson_nll_loss(pos, probs * 4, False, True, 1e-4)),
        (nn.GaussianNLLLoss(full=True, eps=1e-3, reduction="sum"), (x, y, pos),
         lambda: F.gaussian_nll_loss(x, y, pos, True, 1e-3, "sum")),
        (nn.MultiLabelSoftMarginLoss(w, reduction="none"), (x, probs),
         lambda: F.multilabel_soft_margin_loss(x, probs, w, "none")),
        (nn.PairwiseDistance(1.0, 1e-3, True), (x, y), lambda: F.pairwise_distance(x, y, 1.0, 1e-3, True)),
        (nn.CosineSimilarity(0, 1e-4), (x, y), lambda: F.cosine_similarity(x, y, 0, 1e-4)),
    ]


def test_modules_call_their_functional_op(device):
    for module, inputs, functional in _cases(device):
        same(module(*inputs), functional())


def test_reprs_are_pytorchs():
    # PyTorch's losses and distances print no settings; Bilinear prints its sizes.
    for cls in (nn.KLDivLoss, nn.SmoothL1Loss, nn.HuberLoss, nn.SoftMarginLoss, nn.MarginRankingLoss,
                nn.HingeEmbeddingLoss, nn.CosineEmbeddingLoss, nn.TripletMarginLoss, nn.PoissonNLLLoss,
                nn.GaussianNLLLoss, nn.MultiLabelSoftMarginLoss, nn.PairwiseDistance, nn.CosineSimilarity):
        assert repr(cls()) == f"{cls.__name__}()"
    assert repr(nn.Bilinear(3, 4, 2)) == "Bilinear(in1_features=3, in2_features=4, out_features=2, bias=True)"
    assert repr(nn.Bilinear(3, 4, 2, bias=False)).endswith("bias=False)")


def test_defaults_are_pytorchs():
    assert nn.TripletMarginLoss().margin == 1.0 and nn.TripletMarginLoss().p == 2.0
    assert nn.PoissonNLLLoss().log_input and nn.PoissonNLLLoss().eps == 1e-8
    assert nn.GaussianNLLLoss().eps == 1e-6 and nn.HingeEmbeddingLoss().margin == 1.0
    assert nn.CosineSimilarity().dim == 1 and nn.CosineSimilarity().eps == 1e-8
    assert nn.PairwiseDistance().norm == 2.0 and nn.PairwiseDistance().eps == 1e-6
    assert nn.KLDivLoss().reduction == "mean" and nn.SmoothL1Loss().beta == 1.0 and nn.HuberLoss().delta == 1.0


def test_state_dict_keys():
    assert list(nn.Bilinear(3, 4, 2).state_dict()) == ["weight", "bias"]
    assert list(nn.Bilinear(3, 4, 2, bias=False).state_dict()) == ["weight"]
    assert list(nn.MultiLabelSoftMarginLoss(minitorch.ones(4)).state_dict()) == ["weight"]
    assert list(nn.MultiLabelSoftMarginLoss().state_dict()) == []
    assert list(nn.PairwiseDistance().state_dict()) == []


def test_bilinear_shapes_init_and_gradients(device):
    minitorch.manual_seed(0)
    m = nn.Bilinear(3, 4, 2).to(device)
    assert tuple(m.weight.shape) == (2, 3, 4) and tuple(m.bias.shape) == (2,)
    bound = 1 / math.sqrt(3)
    for p in (m.weight, m.bias):
        v = p.detach().cpu().numpy()
        assert np.all(np.abs(v) <= bound) and v.std() > 0.1 * bound
    x1, x2 = rand(device, 5, 3), rand(device, 5, 4, seed=1)
    out = m(x1, x2)
    want = np.einsum("ni,oij,nj->no", x1.cpu().numpy(), m.weight.detach().cpu().numpy(), x2.cpu().numpy())
    np.testing.assert_allclose(out.detach().cpu().numpy(), want + m.bias.detach().cpu().numpy(), rtol=1e-5, atol=1e-5)
    out.sum().backward()
    assert m.weight.grad is not None and tuple(m.weight.grad.shape) == (2, 3, 4)
    np.testing.assert_allclose(m.bias.grad.cpu().numpy(), [5.0, 5.0])


def test_kl_div_mean_warns_and_batchmean_divides_by_the_batch():
    x, t = minitorch.tensor([[-1.0, -2.0], [-0.5, -1.5]]), minitorch.tensor([[0.5, 0.5], [0.25, 0.75]])
    with pytest.warns(UserWarning, match="batchmean"):
        mean = F.kl_div(x, t)
    total = F.kl_div(x, t, reduction="sum")
    np.testing.assert_allclose(mean.item(), total.item() / 4, rtol=1e-6)
    np.testing.assert_allclose(F.kl_div(x, t, reduction="batchmean").item(), total.item() / 2, rtol=1e-6)


def test_gaussian_nll_var_forms_and_clamp():
    x, y = rand("cpu", 3, 4), rand("cpu", 3, 4, seed=1)
    v = rand("cpu", 3, low=0.5, high=2.0, seed=2)
    same(F.gaussian_nll_loss(x, y, v), F.gaussian_nll_loss(x, y, v.unsqueeze(1)))
    same(F.gaussian_nll_loss(x, y, 0.5), F.gaussian_nll_loss(x, y, minitorch.full((3, 4), 0.5)))
    # a variance below eps counts as eps, and its gradient still flows (PyTorch clamps without autograd)
    var = minitorch.tensor([1e-9, 1.0], requires_grad=True)
    F.gaussian_nll_loss(minitorch.tensor([0.0, 0.0]), minitorch.tensor([0.0, 0.0]), var, eps=1e-6,
                        reduction="sum").backward()
    np.testing.assert_allclose(var.grad.numpy(), [0.5 / 1e-6, 0.5], rtol=1e-4)


LOSSES = [nn.KLDivLoss, nn.SmoothL1Loss, nn.HuberLoss, nn.SoftMarginLoss, nn.MarginRankingLoss, nn.HingeEmbeddingLoss,
          nn.CosineEmbeddingLoss, nn.TripletMarginLoss, nn.PoissonNLLLoss, nn.GaussianNLLLoss,
          nn.MultiLabelSoftMarginLoss]


@pytest.mark.parametrize("cls", LOSSES, ids=lambda c: c.__name__)
def test_bad_reduction_is_refused(cls):
    with pytest.raises(ValueError, match="reduction"):
        cls(reduction="avg")


def test_deprecated_positional_arguments_are_refused():
    # PyTorch's second and third positional arguments are size_average and reduce: a
    # positional reduction would mean something else there, so it must be a keyword.
    with pytest.raises(TypeError):
        nn.SmoothL1Loss("sum")
    with pytest.raises(TypeError):
        nn.MarginRankingLoss(0.0, "sum")


def test_functional_bad_arguments():
    x = minitorch.ones(3, 4)
    with pytest.raises(ValueError, match="kl_div: reduction"):
        F.kl_div(x, x, reduction="avg")
    with pytest.raises(ValueError, match="smooth_l1_loss: beta"):
        F.smooth_l1_loss(x, x, beta=-1.0)
    with pytest.raises(ValueError, match="huber_loss: delta"):
        F.huber_loss(x, x, delta=0.0)
    with pytest.raises(ValueError, match=r"margin_ranking_loss: .*\(3, 4\).*\(3,\)"):
        F.margin_ranking_loss(x, x, minitorch.ones(3))
    with pytest.raises(ValueError, match="cosine_embedding_loss: 0D or 1D target"):
        F.cosine_embedding_loss(x, x, x)
    with pytest.raises(ValueError, match="cosine_embedding_loss: 1D target tensor expects 2D input"):
        F.cosine_embedding_loss(minitorch.ones(4), minitorch.ones(4), minitorch.ones(3))
    with pytest.raises(ValueError, match="triplet_margin_loss: .*anchor 2D, positive 2D, and negative 1D"):
        F.triplet_margin_loss(x, x, minitorch.ones(4))
    with pytest.raises(ValueError, match=r"gaussian_nll_loss: var of shape \(2,\)"):
        F.gaussian_nll_loss(x, x, minitorch.ones(2))
    with pytest.raises(ValueError, match="gaussian_nll_loss: var has negative"):
        F.gaussian_nll_loss(x, x, -minitorch.ones(3, 4))
    with pytest.raises(ValueError, match="reduction"):
        F.hinge_embedding_loss(x, x, reduction="avg")


def test_bilinear_bad_arguments():
    w = minitorch.ones(2, 3, 4)
    with pytest.raises(ValueError, match="bilinear: input dimensions do not match"):
        F.bilinear(minitorch.ones(5, 3), minitorch.ones(4), w)
    with pytest.raises(ValueError, match="bilinear: input batch dimensions do not match"):
        F.bilinear(minitorch.ones(5, 3), minitorch.ones(6, 4), w)
    with pytest.raises(ValueError, match="bilinear: input1 size does not match weight size"):
        F.bilinear(minitorch.ones(5, 2), minitorch.ones(5, 4), w)
    with pytest.raises(ValueError, match="bilinear: input2 size does not match weight size"):
        F.bilinear(minitorch.ones(5, 3), minitorch.ones(5, 5), w)
    with pytest.raises(ValueError, match="bilinear: bias size does not match"):
        F.bilinear(minitorch.ones(5, 3), minitorch.ones(5, 4), w, minitorch.ones(3))
    with pytest.raises(ValueError, match="Bilinear: in2_features"):
        nn.Bilinear(3, -1, 2)
