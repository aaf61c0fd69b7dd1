"""``nn.utils`` beyond clipping's first form: ``get_total_norm`` / ``clip_grads_with_norm_``
(clip_grad_norm_ split in two, PyTorch 2.6+), the deprecated ``clip_grad_norm``,
``parameters_to_vector`` / ``vector_to_parameters`` and the BatchNorm folds
(``fuse_conv_bn_eval``, ``fuse_linear_bn_eval`` and their ``_weights`` forms): values against
NumPy on every device, errors, and PyTorch when installed."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitorch
from conftest import TORCH_SKIP_REASON
from minitorch import nn
from minitorch.nn import utils


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


def rand(shape, seed=0):
    return np.random.default_rng(seed).uniform(-3, 3, size=shape)


def with_grads(device, grads):
    ps = []
    for g in grads:
        p = nn.Parameter(minitorch.zeros(g.shape, dtype=minitorch.float64, device=device))
        p.grad = minitorch.tensor(g, device=device)
        ps.append(p)
    return ps


def np_norm(flat, p):
    a = np.abs(flat)
    if p == math.inf:
        return a.max()
    if p == -math.inf:
        return a.min()
    if p == 0:
        return float(np.count_nonzero(a))
    return (a ** p).sum() ** (1 / p)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, math.inf, -math.inf, 0.0])
def test_get_total_norm_matches_numpy(device, p):
    arrs = [rand((3, 4), 1), rand((5,), 2), np.array([0.0, 2.0])]
    ts = [minitorch.tensor(a, device=device) for a in arrs]
    total = utils.get_total_norm(ts, p)
    # the norm of the per-tensor norms: for every order that is the norm of all elements
    # except 0 (PyTorch's too: the 0-"norm" of the counts is how many tensors have any)
    want = np_norm(np.array([np_norm(a.ravel(), p) for a in arrs]), p)
    assert total.shape == () and total.device.type == device and total.dtype == minitorch.float64
    np.testing.assert_allclose(total.item(), want, rtol=1e-12)
    single = utils.get_total_norm(ts[0], p)
    np.testing.assert_allclose(single.item(), np_norm(arrs[0].ravel(), p), rtol=1e-12)


def test_get_total_norm_edges(device):
    assert utils.get_total_norm([]).item() == 0.0
    bad = [minitorch.tensor([1.0, math.nan], device=device)]
    with pytest.raises(RuntimeError, match="non-finite"):
        utils.get_total_norm(bad, error_if_nonfinite=True)
    assert math.isnan(utils.get_total_norm(bad).item())
    x = minitorch.ones(3, device=device, requires_grad=True) * 2  # measured without a graph
    assert utils.get_total_norm([x]).grad_fn is None


@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_total_norm_then_clip_is_clip_grad_norm(device, max_norm):
    grads = [rand((3, 4), 3), rand((7,), 4)]
    a, b = with_grads(device, grads), with_grads(device, grads)
    want = clip_total = utils.clip_grad_norm_(a, max_norm)
    total = utils.get_total_norm([p.grad for p in b])
    assert utils.clip_grads_with_norm_(b, max_norm, total) is None
    np.testing.assert_allclose(total.item(), want.item(), rtol=1e-12)
    scale = min(1.0, max_norm / (clip_total.item() + 1e-6))
    for pa, pb, g in zip(a, b, grads):
        np.testing.assert_allclose(to_np(pb.grad), g * scale, rtol=1e-12)
        np.testing.assert_allclose(to_np(pa.grad), to_np(pb.grad), rtol=1e-12)
    with pytest.raises(TypeError, match="total_norm must be a Tensor"):
        utils.clip_grads_with_norm_(b, 1.0, 2.5)
    utils.clip_grads_with_norm_([nn.Parameter(minitorch.zeros(2))], 1.0, total)  # no grads: nothing to do


def test_clip_grad_norm_other_orders_and_generators(device):
    grads = [rand((4,), 5), rand((2, 2), 6)]
    ps = with_grads(device, grads)
    total = utils.clip_grad_norm_(ps, 1.0, norm_type=-math.inf)  # any order vector_norm takes
    np.testing.assert_allclose(total.item(), min(np.abs(g).min() for g in grads), rtol=1e-12)
    with pytest.warns(UserWarning, match="empty generator"):
        utils.clip_grad_norm_((p for p in []), 1.0)
    ps = with_grads(device, grads)
    total = utils.clip_grad_norm_((p for p in ps), 1.0)  # a generator is read once
    assert ps[0].grad.abs().max().item() <= 1.0 and total.item() > 1.0
    with pytest.warns(FutureWarning, match="deprecated"):
        again = utils.clip_grad_norm(ps, 1.0)
    np.testing.assert_allclose(again.item(), 1.0, rtol=1e-5)


def test_parameters_to_vector_and_back(device):
    minitorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)).to(device)
    ps = list(model.parameters())
    vec = utils.parameters_to_vector(model.parameters())
    assert vec.shape == (3 * 4 + 4 + 4 * 2 + 2,) and vec.device.type == device
    np.testing.assert_array_equal(to_np(vec), np.concatenate([to_np(p).ravel() for p in ps]))
    vec.sum().backward()  # recorded: each parameter's gradient is ones
    for p in ps:
        np.testing.assert_array_equal(to_np(p.grad), np.ones(p.shape))
    new = minitorch.arange(vec.numel(), dtype=minitorch.float32, device=device)
    utils.vector_to_parameters(new, model.parameters())
    np.testing.assert_array_equal(to_np(model[0].weight), np.arange(12).reshape(4, 3))
    np.testing.assert_array_equal(to_np(model[2].bias), [24, 25])
    assert all(p.requires_grad and isinstance(p, nn.Parameter) for p in model.parameters())
    new[0] = 100.0  # the parameters share vec's memory, as in PyTorch
    assert model[0].weight[0, 0].item() == 100.0


def test_parameters_vector_errors(device):
    a = nn.Parameter(minitorch.zeros(2, 2, device=device))
    with pytest.raises(TypeError, match="expected minitorch.Tensor"):
        utils.vector_to_parameters([1.0, 2.0], [a])
    with pytest.raises(ValueError, match="hold 4 elements, vec has 3"):
        utils.vector_to_parameters(minitorch.zeros(3, device=device), [a])
    with pytest.raises(ValueError, match="must be 1-D"):
        utils.vector_to_parameters(minitorch.zeros(2, 2, device=device), [a])
    with pytest.raises(ValueError, match="at least one parameter"):
        utils.parameters_to_vector([])
    with pytest.raises(TypeError, match="expected an iterable of Tensors"):
        utils.parameters_to_vector([1.0])
    with pytest.raises(RuntimeError, match="view"):
        utils.parameters_to_vector([a.t()])  # view(-1) of a transpose, as PyTorch
    if device == "cuda":
        with pytest.raises(TypeError, match="different devices"):
            utils.parameters_to_vector([a, nn.Parameter(minitorch.zeros(2))])


def trained_bn(bn, shape, device, seed):
    """bn with running statistics from a few batches, then eval mode."""
    bn.to(device).train()
    rng = np.random.default_rng(seed)
    for _ in range(3):
        bn(minitorch.tensor(rng.standard_normal(shape) * 2 + 1, dtype=minitorch.float32, device=device))
    if bn.affine:
        with minitorch.no_grad():
            bn.weight.copy_(minitorch.tensor(rng.uniform(0.5, 2, bn.num_features), dtype=minitorch.float32))
            bn.bias.copy_(minitorch.tensor(rng.uniform(-1, 1, bn.num_features), dtype=minitorch.float32))
    return bn.eval()


@pytest.mark.parametrize("bias,affine", [(True, True), (False, True), (True, False)])
def test_fuse_conv_bn_eval(device, bias, affine):
    minitorch.manual_seed(1)
    conv = nn.Conv2d(3, 5, 3, padding=1, bias=bias).to(device).eval()
    bn = trained_bn(nn.BatchNorm2d(5, affine=affine), (4, 5, 6, 6), device, 2)
    x = minitorch.randn(2, 3, 6, 6, device=device)
    fused = utils.fuse_conv_bn_eval(conv, bn)
    assert fused is not conv and isinstance(fused, nn.Conv2d)
    assert isinstance(fused.weight, nn.Parameter) and isinstance(fused.bias, nn.Parameter)
    assert fused.weight.requires_grad and fused.bias.requires_grad == bias
    np.testing.assert_allclose(to_np(fused(x)), to_np(bn(conv(x))), rtol=1e-4, atol=1e-5)
    if not bias:
        assert conv.bias is None  # the original is untouched


def test_fuse_conv_transpose_bn_eval(device):
    minitorch.manual_seed(3)
    conv = nn.ConvTranspose2d(3, 4, 2, stride=2).to(device).eval()
    bn = trained_bn(nn.BatchNorm2d(4), (2, 4, 5, 5), device, 4)
    x = minitorch.randn(2, 3, 4, 4, device=device)
    fused = utils.fuse_conv_bn_eval(conv, bn, transpose=True)
    np.testing.assert_allclose(to_np(fused(x)), to_np(bn(conv(x))), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("features", [6, 1])
def test_fuse_linear_bn_eval(device, features):
    minitorch.manual_seed(5)
    lin = nn.Linear(4, 6).to(device).eval()
    bn = trained_bn(nn.BatchNorm1d(features), (8, features), device, 6)
    x = minitorch.randn(7, 4, device=device)
    fused = utils.fuse_linear_bn_eval(lin, bn)
    want = bn(lin(x)) if features == 6 else bn(lin(x).reshape(-1, 1)).reshape(7, 6)
    np.testing.assert_allclose(to_np(fused(x)), to_np(want), rtol=1e-4, atol=1e-5)
    assert fused.weight.shape == (6, 4) and fused.bias.shape == (6,)


def test_fuse_errors(device):
    conv, bn = nn.Conv2d(2, 3, 1).to(device), nn.BatchNorm2d(3).to(device)
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        utils.fuse_conv_bn_eval(conv, bn)
    with pytest.raises(AssertionError, match="running_mean and bn.running_var must not be None"):
        utils.fuse_conv_bn_eval(conv.eval(), nn.BatchNorm2d(3, track_running_stats=False).eval())
    with pytest.raises(AssertionError, match="linear.out_features == bn.num_features"):
        utils.fuse_linear_bn_eval(nn.Linear(2, 3).eval(), nn.BatchNorm1d(4).eval())


def test_parameter_prints_as_parameter():
    p = nn.Parameter(minitorch.zeros(2))
    assert str(p) == repr(p) == "Parameter containing:\ntensor([0., 0.], requires_grad=True)"


def test_match_torch():
    torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)
    tlin = torch.nn.Linear(3, 4).double()
    ours = nn.Linear(3, 4).double()
    ours.load_state_dict({k: minitorch.tensor(v.detach().numpy()) for k, v in tlin.state_dict().items()})
    np.testing.assert_array_equal(to_np(utils.parameters_to_vector(ours.parameters())),
                                  torch.nn.utils.parameters_to_vector(tlin.parameters()).detach().numpy())
    tconv, tbn = torch.nn.Conv2d(2, 3, 3).double().eval(), torch.nn.BatchNorm2d(3).double().eval()
    rng = np.random.default_rng(7)
    with torch.no_grad():
        tbn.running_mean.copy_(torch.tensor(rng.standard_normal(3)))
        tbn.running_var.copy_(torch.tensor(rng.uniform(0.5, 2, 3)))
        tbn.weight.copy_(torch.tensor(rng.uniform(0.5, 2, 3)))
    conv, bn = nn.Conv2d(2, 3, 3).double().eval(), nn.BatchNorm2d(3).double().eval()
    conv.load_state_dict({k: minitorch.tensor(v.numpy()) for k, v in tconv.state_dict().items()})
    bn.load_state_dict({k: minitorch.tensor(v.numpy()) for k, v in tbn.state_dict().items()})
    tf, f = torch.nn.utils.fuse_conv_bn_eval(tconv, tbn), utils.fuse_conv_bn_eval(conv, bn)
    np.testing.assert_allclose(to_np(f.weight), tf.weight.detach().numpy(), rtol=1e-13)
    np.testing.assert_allclose(to_np(f.bias), tf.bias.detach().numpy(), rtol=1e-13)
