"""minitorch.utils.memory.memory_breakdown: a step's peak split into categories that sum to
max_memory_allocated, per layer, train and eval, on cpu and (emulated) cuda."""
import pytest

import minitorch
import minitorch.nn.functional as F
from minitorch import nn
from minitorch.utils.memory import CATEGORIES, memory_breakdown


def _mem(device):
    return minitorch.cpu if device == "cpu" else minitorch.cuda


def _block_bytes(t):
    dev = t.device.type
    p = t.data_ptr() - t.storage_offset() * t.element_size()
    return minitorch._C._memory_block_size(dev, p)


def _mlp():
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))


def _cnn():
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(4 * 5 * 5, 10))


def _check(b, model, device):
    assert set(b.categories) == set(CATEGORIES)
    assert all(v >= 0 for v in b.categories.values()), b.categories
    assert sum(b.categories.values()) == b.peak == _mem(device).max_memory_allocated()
    held = sum(_block_bytes(t) for t in [*model.parameters(), *model.buffers()])
    assert b.categories["parameters"] == held == sum(r.parameters for r in b.layers)
    assert "at the peak" in str(b)


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_categories_sum_to_the_peak_in_training(device, kind):
    minitorch.manual_seed(0)
    model = (_mlp() if kind == "mlp" else _cnn()).to(device)
    x = minitorch.randn(*((32, 64) if kind == "mlp" else (8, 1, 12, 12)), device=device)
    y = minitorch.randint(0, 10, (x.shape[0],), device=device)
    opt = minitorch.optim.Adam(model.parameters())
    for step in range(2):  # the first step creates Adam's state, the second starts with it
        b = memory_breakdown(model, x, loss_fn=lambda out: F.cross_entropy(out, y), optimizer=opt)
        _check(b, model, device)
        assert b.train and b.categories["activations"] > 0
        assert sum(r.gradients for r in b.layers) == sum(_block_bytes(p.grad) for p in model.parameters())
        state = sum(_block_bytes(t) for s in opt.state.values() for t in s.values() if isinstance(t, minitorch.Tensor))
        assert sum(r.optimizer_state for r in b.layers) == state
        if step == 1:  # the state exists throughout the second step
            assert b.categories["optimizer_state"] == state
    rows = {r.name: r for r in b.layers}
    if kind == "mlp":
        # ReLU saves its output (32 x 128 float32), which the second Linear saves again: once
        assert rows["1"].activations == 32 * 128 * 4
        assert rows["2"].activations == 0
        assert b.categories["inputs"] == _block_bytes(x)
    else:
        bn = rows["1"]  # BatchNorm: weight, bias, running_mean, running_var, num_batches_tracked
        assert bn.parameters == sum(_block_bytes(t) for t in [*model[1].parameters(), *model[1].buffers()])
        assert bn.activations > 0
        assert rows["0"].activations == 0  # the convolution saves its input (an input) and weight (a parameter)


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_eval_keeps_no_activations(device, kind):
    model = (_mlp() if kind == "mlp" else _cnn()).to(device)
    model.train()
    x = minitorch.randn(*((32, 64) if kind == "mlp" else (8, 1, 12, 12)), device=device)
    b = memory_breakdown(model, x, train=False)
    _check(b, model, device)
    assert b.categories["activations"] == b.categories["gradients"] == b.categories["optimizer_state"] == 0
    assert b.categories["temporaries"] > 0 and b.peak_phase == "forward"
    assert model.training  # the modes are restored


def test_breakdown_without_optimizer_and_arguments():
    model = _mlp()
    b = memory_breakdown(model, (minitorch.randn(4, 64),))
    assert b.categories["gradients"] > 0 and b.categories["optimizer_state"] == 0
    assert b.peak_phase in ("forward", "backward")
    with pytest.raises(TypeError, match="nn.Module"):
        memory_breakdown(lambda x: x, minitorch.randn(2))
    with pytest.raises(TypeError, match="tensor"):
        memory_breakdown(model, [1, 2])


def test_checkpointing_keeps_fewer_activations():
    from minitorch.utils.checkpoint import checkpoint

    class Deep(nn.Module):
        def __init__(self, ck):
            super().__init__()
            self.ck = ck
            self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
                                         for _ in range(3)])

        def forward(self, x):
            for b in self.blocks:
                x = checkpoint(b, x, use_reentrant=False) if self.ck else b(x)
            return x

    x = minitorch.randn(64, 32)
    plain, ck = (memory_breakdown(Deep(flag), x) for flag in (False, True))
    for b in (plain, ck):
        assert sum(b.categories.values()) == b.peak
    saved = [sum(r.activations for r in b.layers) for b in (plain, ck)]
    assert saved[0] == 6 * 64 * 32 * 4  # every ReLU's output
    assert saved[1] == 3 * 64 * 32 * 4  # each block's output: the next block's kept input, and the model's output
