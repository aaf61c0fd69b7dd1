"""nn.SyncBatchNorm in one process: it is BatchNorm (values, gradients, running statistics,
eval) on every device and any rank of input >= 2; convert_sync_batchnorm swaps every
BatchNorm layer of a model keeping its parameters, buffers and mode. Two ranks:
tests/distributed/test_dist_sync_bn.py."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import TORCH_SKIP_REASON
from minitorch import nn


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


@pytest.mark.parametrize("shape, plain", [((6, 3), nn.BatchNorm1d), ((4, 3, 5), nn.BatchNorm1d),
                                          ((2, 3, 4, 4), nn.BatchNorm2d), ((2, 3, 2, 3, 2), nn.BatchNorm3d)])
@pytest.mark.parametrize("momentum", [0.1, None])
def test_one_process_is_batchnorm(device, shape, plain, momentum):
    rng = np.random.default_rng(len(shape))
    a, b = nn.SyncBatchNorm(3, momentum=momentum).double().to(device), plain(3, momentum=momentum).double().to(device)
    for step in range(2):
        x = rng.standard_normal(shape) * 3 + step
        xa = minitorch.tensor(x, device=device, requires_grad=True)
        xb = minitorch.tensor(x, device=device, requires_grad=True)
        g = minitorch.tensor(rng.standard_normal(shape), device=device)
        (a(xa) * g).sum().backward()
        (b(xb) * g).sum().backward()
        np.testing.assert_allclose(to_np(xa.grad), to_np(xb.grad), rtol=1e-12, atol=1e-12)
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(to_np(getattr(a, name)), to_np(getattr(b, name)), rtol=1e-12)
    np.testing.assert_allclose(to_np(a.weight.grad), to_np(b.weight.grad), rtol=1e-12)
    a.eval(), b.eval()
    x = minitorch.tensor(rng.standard_normal(shape), device=device)
    np.testing.assert_allclose(to_np(a(x)), to_np(b(x)), rtol=1e-12)


def test_convert_sync_batchnorm_keeps_everything():
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4, momentum=0.3, eps=1e-3),
                          nn.Sequential(nn.Flatten(), nn.BatchNorm1d(4 * 9, affine=False)), nn.ReLU())
    model.train()
    model[1].running_mean.fill_(0.5)
    model[2][1].eval()
    weight = model[1].weight
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model, process_group="group-sentinel")
    sync, sync1d = converted[1], converted[2][1]
    assert isinstance(sync, nn.SyncBatchNorm) and isinstance(sync1d, nn.SyncBatchNorm)
    assert sync.weight is weight and sync.running_mean is model[1].running_mean  # shared, as PyTorch's
    assert (sync.eps, sync.momentum, sync.process_group) == (1e-3, 0.3, "group-sentinel")
    assert sync.training and not sync1d.training and sync1d.weight is None
    assert list(converted.state_dict()) == list(nn.Sequential(
        nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Sequential(nn.Flatten(), nn.BatchNorm1d(36, affine=False)),
        nn.ReLU()).state_dict())
    single = nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm1d(5))
    assert isinstance(single, nn.SyncBatchNorm) and single.num_features == 5
    assert repr(single) == "SyncBatchNorm(5, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)"


def test_errors():
    with pytest.raises(ValueError, match="expected at least 2D input"):
        nn.SyncBatchNorm(3)(minitorch.ones(3))
    with pytest.raises(ValueError, match="expected input with 3 channels"):
        nn.SyncBatchNorm(3)(minitorch.ones(2, 4))
    with pytest.raises(ValueError, match="num_features must be a positive int"):
        nn.SyncBatchNorm(0)


def test_match_torch():
    torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)
    theirs = torch.nn.SyncBatchNorm.convert_sync_batchnorm(torch.nn.Sequential(torch.nn.BatchNorm2d(4)))
    ours = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.BatchNorm2d(4)))
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
