"""``nn.Module``: registration, traversal, modes, devices, zero_grad, state_dict and repr.

Registration, traversal and repr are plain Python and run once; everything that moves,
computes with or copies tensors runs on every device."""
from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.nn import functional as F

from conftest import DEVICES, TORCH_SKIP_REASON

# For tests about a second device beside the CPU (skipped, with the reason, without CUDA).
ACCELERATORS = [p for p in DEVICES if p.id != "cpu"]


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(4, 2, bias=False)
        self.scale = nn.Parameter(minitorch.ones(2))
        self.plain = minitorch.zeros(5)          # a plain tensor: not registered
        self.number = 7                          # a plain attribute

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x))) * self.scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.head = nn.Linear(2, 1)


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


def assert_on(module, device: str) -> None:
    """Every parameter, gradient and buffer of ``module`` lives on ``device``."""
    for n, p in module.named_parameters():
        assert p.device.type == device, n
        assert p.grad is None or p.grad.device == p.device, n
    for n, b in module.named_buffers():
        assert b.device.type == device, n


# ---------------------------------------------------------------- registration ----

def test_parameters_and_modules_are_registered_plain_tensors_are_not():
    b = Block()
    assert list(b._parameters) == ["scale"]
    assert list(b._modules) == ["fc1", "act", "fc2"]
    assert "plain" not in b._parameters and "plain" not in b._buffers and "plain" not in b._modules
    assert isinstance(b.plain, minitorch.Tensor)
    assert b.number == 7
    names = [n for n, _ in b.named_parameters()]
    assert "plain" not in names
    assert all(isinstance(p, nn.Parameter) for p in b.parameters())


def test_named_parameters_dotted_names_in_order():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["block.scale", "block.fc1.weight", "block.fc1.bias", "block.fc2.weight",
                     "head.weight", "head.bias"]
    shapes = {n: tuple(p.shape) for n, p in net.named_parameters()}
    assert shapes["block.fc1.weight"] == (4, 3)
    assert shapes["block.fc2.weight"] == (2, 4)
    assert shapes["head.bias"] == (1,)
    assert len(list(net.parameters())) == 6
    # named_parameters yields the very objects stored on the modules
    assert dict(net.named_parameters())["block.fc1.weight"] is net.block.fc1.weight


def test_parameters_recurse_false():
    net = Block()
    assert [n for n, _ in net.named_parameters(recurse=False)] == ["scale"]


def test_children_and_modules():
    net = Net()
    assert list(net.children()) == [net.block, net.head]
    assert [n for n, _ in net.named_children()] == ["block", "head"]
    mods = list(net.modules())
    assert mods == [net, net.block, net.block.fc1, net.block.act, net.block.fc2, net.head]
    assert [n for n, _ in net.named_modules()] == ["", "block", "block.fc1", "block.act", "block.fc2", "head"]


def test_shared_parameters_and_modules_are_deduplicated():
    shared = nn.Linear(3, 3)
    seq = nn.Sequential(shared, nn.ReLU(), shared)
    params = list(seq.parameters())
    assert len(params) == 2
    assert params[0] is shared.weight and params[1] is shared.bias
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias"]
    assert len(list(seq.modules())) == 3  # seq, shared, relu
    assert len(list(seq.children())) == 2

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(2, 2)
            self.b = nn.Linear(2, 2)
            self.b.weight = self.a.weight

    t = Tied()
    assert [n for n, _ in t.named_parameters()] == ["a.weight", "a.bias", "b.bias"]


def test_reassigning_attribute_kinds():
    m = nn.Module()
    m.w = nn.Parameter(minitorch.zeros(2))
    with pytest.raises(TypeError, match="parameter 'w'"):
        m.w = minitorch.zeros(2)  # a plain tensor may not replace a parameter
    m.w = None
    assert m.w is None
    assert list(m.parameters()) == []
    m.sub = nn.ReLU()
    with pytest.raises(TypeError, match="child module 'sub'"):
        m.sub = 3
    del m.sub
    assert list(m.children()) == []


def test_setattr_before_init_raises():
    class Bad(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(2, 2)

    with pytest.raises(AttributeError, match=r"super\(\)\.__init__\(\)"):
        Bad()


def test_missing_attribute_message():
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
        nn.Linear(2, 2).nope


def test_buffers_are_in_state_dict_but_not_parameters():
    m = nn.Linear(2, 2)
    m.register_buffer("running", minitorch.ones(2))
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    assert [n for n, _ in m.named_buffers()] == ["running"]
    assert list(m.state_dict()) == ["weight", "bias", "running"]


# ---------------------------------------------------------------- modes / grads ----

def test_train_eval_propagate():
    net = Net()
    assert all(m.training for m in net.modules())
    assert net.eval() is net
    assert all(not m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    net.train(False)
    assert not net.block.fc1.training
    with pytest.raises(ValueError):
        net.train("yes")


def _backward_once(net, device):
    x = minitorch.randn(5, 3, device=device)
    net.head(net.block(x)).sum().backward()


def test_zero_grad_set_to_none(device):
    net = Net().to(device)
    _backward_once(net, device)
    assert all(p.grad is not None for p in net.parameters())
    assert_on(net, device)
    net.zero_grad()  # default set_to_none=True, like PyTorch 2
    assert all(p.grad is None for p in net.parameters())


def test_zero_grad_set_to_zero_keeps_tensors(device):
    net = Net().to(device)
    _backward_once(net, device)
    before = {n: p.grad for n, p in net.named_parameters()}
    assert any(np.abs(to_np(g)).sum() > 0 for g in before.values())
    net.zero_grad(set_to_none=False)
    for n, p in net.named_parameters():
        assert p.grad is not None
        assert p.grad is before[n] or p.grad.data_ptr() == before[n].data_ptr()
        np.testing.assert_array_equal(to_np(p.grad), np.zeros(tuple(p.shape), np.float32))
    assert_on(net, device)
    # gradients then accumulate from zero
    _backward_once(net, device)
    assert np.abs(to_np(net.head.bias.grad)).sum() > 0


# ---------------------------------------------------------------- devices ----

def test_module_to_moves_parameters_grads_and_buffers(device):
    net = Net()
    net.block.register_buffer("running", minitorch.arange(3))
    _backward_once(net, "cpu")
    params = dict(net.named_parameters())
    values = {n: to_np(p) for n, p in params.items()}
    grads = {n: to_np(p.grad) for n, p in params.items()}
    assert net.to(device) is net
    assert_on(net, device)
    for n, p in net.named_parameters():
        assert p is params[n], n  # moved in place: the same Parameter objects, like PyTorch
        assert isinstance(p, nn.Parameter) and p.is_leaf and p.requires_grad, n
        np.testing.assert_array_equal(to_np(p), values[n], err_msg=n)
        np.testing.assert_array_equal(to_np(p.grad), grads[n], err_msg=n)
    np.testing.assert_array_equal(to_np(net.block.running), np.arange(3))
    assert net.block.plain.device.type == "cpu"  # a plain tensor attribute is not state
    # gradients of a forward pass on the device accumulate there
    x = np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32)
    net.head(net.block(minitorch.tensor(x, device=device))).sum().backward()
    assert_on(net, device)
    assert np.all(to_np(net.head.bias.grad) == grads["head.bias"] + 5)
    # .cpu() / .cuda() are .to() by another name
    assert getattr(net, device)() is net
    assert_on(net, device)
    assert net.cpu() is net
    assert_on(net, "cpu")
    np.testing.assert_array_equal(to_np(net.block.fc1.weight), values["block.fc1.weight"])


@pytest.mark.parametrize("device", ACCELERATORS)
def test_module_and_inputs_on_different_devices_raise(device):
    lin = nn.Linear(3, 2).to(device)
    with pytest.raises(RuntimeError, match="device"):
        lin(minitorch.zeros(4, 3))  # input left on the CPU
    logits = lin(minitorch.zeros(4, 3, device=device))
    with pytest.raises(RuntimeError, match="device"):
        F.cross_entropy(logits, minitorch.tensor([0, 1, 0, 1]))  # targets left on the CPU


def test_module_to_device_and_dtype_at_once(device):
    lin = nn.Linear(3, 2)
    w = to_np(lin.weight)
    assert lin.to(device, minitorch.float64) is lin
    assert lin.weight.dtype == minitorch.float64 and lin.bias.dtype == minitorch.float64
    assert_on(lin, device)
    np.testing.assert_array_equal(to_np(lin.weight), w.astype(np.float64))


# ---------------------------------------------------------------- state_dict ----

def test_state_dict_keys_and_values(device):
    net = Net().to(device)
    sd = net.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == [n for n, _ in net.named_parameters()]
    for n, p in net.named_parameters():
        np.testing.assert_array_equal(to_np(sd[n]), to_np(p))
        assert not sd[n].requires_grad
        assert sd[n].device == p.device


# Where the source and destination modules live, relative to the device under test.
PLACEMENTS = {"to-device": ("cpu", None), "from-device": (None, "cpu"), "on-device": (None, None)}


@pytest.mark.parametrize("placement", list(PLACEMENTS))
def test_load_state_dict_round_trip_copies_values(device, placement):
    src_dev, dst_dev = (d or device for d in PLACEMENTS[placement])
    src, dst = Net().to(src_dev), Net().to(dst_dev)
    assert not np.array_equal(to_np(src.head.weight), to_np(dst.head.weight))
    result = dst.load_state_dict(src.state_dict())
    assert tuple(result) == ([], []) and result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == str(result) == "<All keys matched successfully>"  # as PyTorch prints it
    assert_on(dst, dst_dev)  # values are copied into dst's own tensors, where they live
    assert_on(src, src_dev)
    for (n, a), (_, b) in zip(src.named_parameters(), dst.named_parameters()):
        np.testing.assert_array_equal(to_np(a), to_np(b), err_msg=n)
        assert a is not b
    # the destination is independent of the source afterwards
    with minitorch.no_grad():
        src.head.weight.fill_(123.0)
    assert not np.any(to_np(dst.head.weight) == 123.0)
    # ... and dst keeps its own Parameter objects (still leaves requiring grad)
    assert dst.head.weight.requires_grad and dst.head.weight.is_leaf


def test_load_state_dict_from_detached_copy_is_independent(device):
    src, dst = nn.Linear(3, 2).to(device), nn.Linear(3, 2).to(device)
    sd = {k: minitorch.tensor(to_np(v), device=device) for k, v in src.state_dict().items()}
    dst.load_state_dict(sd)
    with minitorch.no_grad():
        sd["weight"].fill_(5.0)
    np.testing.assert_array_equal(to_np(dst.weight), to_np(src.weight))


def test_load_state_dict_missing_keys_strict():
    net = nn.Linear(3, 2)
    sd = net.state_dict()
    del sd["bias"]
    with pytest.raises(RuntimeError, match=r'Missing key\(s\) in state_dict: "bias"'):
        net.load_state_dict(sd)


def test_load_state_dict_unexpected_keys_strict():
    net = nn.Linear(3, 2)
    sd = net.state_dict()
    sd["extra.weight"] = minitorch.zeros(1)
    with pytest.raises(RuntimeError, match=r'Unexpected key\(s\) in state_dict: "extra.weight"'):
        net.load_state_dict(sd)


def test_load_state_dict_strict_failure_leaves_model_unchanged():
    net = nn.Linear(3, 2)
    before = to_np(net.weight)
    sd = {"weight": minitorch.zeros(2, 3), "bogus": minitorch.zeros(1)}
    with pytest.raises(RuntimeError):
        net.load_state_dict(sd)
    np.testing.assert_array_equal(to_np(net.weight), before)


def test_load_state_dict_size_mismatch():
    net = nn.Linear(3, 2)
    sd = nn.Linear(4, 2).state_dict()
    with pytest.raises(RuntimeError, match="size mismatch for weight") as e:
        net.load_state_dict(sd)
    assert "(2, 4)" in str(e.value) and "(2, 3)" in str(e.value)
    # shapes must match even with strict=False
    with pytest.raises(RuntimeError, match="size mismatch"):
        net.load_state_dict(sd, strict=False)


def test_load_state_dict_non_strict_returns_missing_and_unexpected(device):
    net = Net().to(device)
    sd = net.state_dict()
    new_w = np.full((1, 2), 0.5, np.float32)
    sd["head.weight"] = minitorch.tensor(new_w)  # a CPU tensor, copied to the module's device
    del sd["block.scale"]
    sd["block.extra"] = minitorch.zeros(3)
    result = net.load_state_dict(sd, strict=False)
    missing, unexpected = result
    assert missing == ["block.scale"] and result.missing_keys is missing
    assert unexpected == ["block.extra"] and result.unexpected_keys is unexpected
    # PyTorch's _IncompatibleKeys repr
    assert repr(result) == str(result) == ("_IncompatibleKeys(missing_keys=['block.scale'], "
                                           "unexpected_keys=['block.extra'])")
    np.testing.assert_array_equal(to_np(net.head.weight), new_w)
    assert_on(net, device)


# ---------------------------------------------------------------- repr ----

def test_sequential_repr_matches_pytorch():
    model = nn.Sequential(nn.Linear(784, 128), nn.ReLU())
    assert repr(model) == ("Sequential(\n  (0): Linear(in_features=784, out_features=128, bias=True)\n"
                           "  (1): ReLU()\n)")


def test_nested_repr_matches_pytorch():
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 128, bias=False), nn.Sigmoid(),
                          nn.Sequential(nn.Dropout(0.25), nn.Linear(128, 10)), nn.LogSoftmax(dim=1))
    expected = (
        "Sequential(\n"
        "  (0): Flatten(start_dim=1, end_dim=-1)\n"
        "  (1): Linear(in_features=784, out_features=128, bias=False)\n"
        "  (2): Sigmoid()\n"
        "  (3): Sequential(\n"
        "    (0): Dropout(p=0.25, inplace=False)\n"
        "    (1): Linear(in_features=128, out_features=10, bias=True)\n"
        "  )\n"
        "  (4): LogSoftmax(dim=1)\n"
        ")"
    )
    assert repr(model) == expected


def test_leaf_reprs_match_pytorch():
    assert repr(nn.Tanh()) == "Tanh()"
    assert repr(nn.Softmax(dim=-1)) == "Softmax(dim=-1)"
    assert repr(nn.CrossEntropyLoss()) == "CrossEntropyLoss()"
    assert repr(nn.Softmax()) == "Softmax(dim=None)"


def test_loss_repr_with_reduction_matches_pytorch():
    # PyTorch's losses have no extra_repr: the reduction is not printed.
    assert repr(nn.MSELoss(reduction="sum")) == "MSELoss()"
    assert repr(nn.CrossEntropyLoss(reduction="none")) == "CrossEntropyLoss()"


def test_repr_matches_torch_when_available():
    torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)
    ours = nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Dropout(0.1),
                         nn.Sequential(nn.Linear(128, 10, bias=False), nn.Softmax(dim=1)), nn.Tanh())
    theirs = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 128), torch.nn.ReLU(),
                                 torch.nn.Dropout(0.1),
                                 torch.nn.Sequential(torch.nn.Linear(128, 10, bias=False), torch.nn.Softmax(dim=1)),
                                 torch.nn.Tanh())
    assert repr(ours) == repr(theirs)


# ---------------------------------------------------------------- containers ----

def test_sequential_forward_indexing_and_len(device):
    seq = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)).to(device)
    assert len(seq) == 3
    assert isinstance(seq[1], nn.ReLU)
    assert isinstance(seq[-1], nn.Linear) and seq[-1].out_features == 2
    assert len(seq[:2]) == 2
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    w1, b1, w2, b2 = (to_np(p) for p in seq.parameters())
    expected = np.maximum(x @ w1.T + b1, 0) @ w2.T + b2
    np.testing.assert_allclose(to_np(seq(minitorch.tensor(x, device=device))), expected, rtol=1e-5, atol=1e-6)


def test_sequential_from_ordered_dict_names():
    seq = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 3)), ("act", nn.ReLU())]))
    assert [n for n, _ in seq.named_parameters()] == ["fc.weight", "fc.bias"]
    assert "(fc): Linear" in repr(seq)


def test_module_list_registers_parameters():
    ml = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 3)])
    ml.append(nn.Linear(3, 1))
    assert len(ml) == 3
    assert [n for n, _ in ml.named_parameters()] == ["0.weight", "0.bias", "1.weight", "1.bias",
                                                     "2.weight", "2.bias"]


def test_forward_not_implemented():
    with pytest.raises(NotImplementedError, match="forward"):
        nn.Module()(minitorch.zeros(1))


def test_state_dict_tensors_share_memory_with_parameters(device):
    # Like PyTorch: state_dict() values are detached views of the parameters.
    lin = nn.Linear(3, 2).to(device)
    sd = lin.state_dict()
    with minitorch.no_grad():
        sd["weight"].fill_(3.0)
    np.testing.assert_array_equal(to_np(lin.weight), np.full((2, 3), 3.0, np.float32))


@pytest.mark.parametrize("src_device", ["cpu", "same"])
def test_load_state_dict_casts_dtype(device, src_device):
    dst = nn.Linear(3, 2).to(device)
    src = nn.Linear(3, 2).to(device if src_device == "same" else src_device).double()
    dst.load_state_dict(src.state_dict())
    assert dst.weight.dtype == minitorch.float32
    assert_on(dst, device)
    np.testing.assert_allclose(to_np(dst.weight), to_np(src.weight).astype(np.float32))


def test_sequential_slice_keeps_names_like_pytorch():
    seq = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    tail = seq[1:]
    assert isinstance(tail, nn.Sequential) and len(tail) == 2
    assert tail[1] is seq[2]
    # PyTorch's Sequential.__getitem__(slice) keeps the original keys ("1", "2")
    assert [n for n, _ in tail.named_parameters()] == ["2.weight", "2.bias"]


def test_module_dtype_casts_floating_state_only(device):
    """Like PyTorch, ``.double()``/``.to(dtype)`` leave integer buffers alone."""
    m = nn.Linear(2, 2)
    m.register_buffer("count", minitorch.tensor(3))
    m.register_buffer("avg", minitorch.zeros(2))
    m.to(device, minitorch.float64)
    assert m.count.dtype == minitorch.int64 and m.count.device.type == device and m.count.item() == 3
    assert m.avg.dtype == minitorch.float64 and m.weight.dtype == minitorch.float64
    m.float()
    assert m.count.dtype == minitorch.int64 and m.avg.dtype == minitorch.float32
