"""autograd.graph.saved_tensors_hooks / save_on_cpu, and utils.checkpoint (which is built
on them): the same gradients as a plain run, with fewer tensors kept between forward and
backward."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
import minitorch.nn as nn
import minitorch.nn.functional as F
from conftest import DEVICES
from minitorch.autograd.graph import save_on_cpu, saved_tensors_hooks
from minitorch.utils.checkpoint import checkpoint, checkpoint_sequential


def leaf(shape, seed, device="cpu"):
    a = np.random.default_rng(seed).standard_normal(shape)
    return minitorch.tensor(a, dtype=minitorch.float64, device=device, requires_grad=True)


def model_fn(x, w):
    return (F.linear(x, w).tanh() * x.sigmoid()).exp().sum()


def test_hooks_see_every_saved_tensor_and_backward_uses_unpacked_values():
    x, w = leaf((3, 4), 0), leaf((4, 4), 1)
    model_fn(x, w).backward()
    expected = [x.grad.numpy().copy(), w.grad.numpy().copy()]
    x.grad = w.grad = None
    packed, unpacked = [], []

    def pack(t):
        packed.append(tuple(t.shape))
        return t.numpy().copy()  # the node keeps a NumPy copy only

    def unpack(a):
        unpacked.append(a.shape)
        return minitorch.tensor(a, dtype=minitorch.float64)

    with saved_tensors_hooks(pack, unpack):
        y = model_fn(x, w)
    assert len(packed) >= 5 and not unpacked
    y.backward()
    assert len(unpacked) == len(packed)
    np.testing.assert_allclose(x.grad.numpy(), expected[0])
    np.testing.assert_allclose(w.grad.numpy(), expected[1])


def test_hooks_apply_only_inside_the_context_and_nest():
    x = leaf((3,), 2)
    outer, inner = [], []
    with saved_tensors_hooks(lambda t: outer.append(1) or t, lambda t: t):
        a = x.exp()
        with saved_tensors_hooks(lambda t: inner.append(1) or t, lambda t: t):
            b = x.sin()
        c = x.cos()
    d = x.tanh()
    assert len(outer) == 2 and len(inner) == 1
    (a + b + c + d).sum().backward()
    xs = x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(xs) + np.cos(xs) - np.sin(xs) + 1 - np.tanh(xs) ** 2)


def test_unpack_must_return_a_matching_tensor():
    x = leaf((3,), 3)
    with saved_tensors_hooks(lambda t: t, lambda t: minitorch.zeros(2, dtype=minitorch.float64)):
        y = x.exp().sum()
    with pytest.raises(RuntimeError, match="unpack_hook must return a tensor of the shape"):
        y.backward()
    with saved_tensors_hooks(lambda t: t, lambda t: 3):
        y = x.exp().sum()
    with pytest.raises(TypeError, match="unpack_hook must return a Tensor"):
        y.backward()


def test_custom_function_saved_tensors_go_through_hooks():
    class Square(minitorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x

    x = leaf((4,), 4)
    seen = []
    with saved_tensors_hooks(lambda t: seen.append(1) or t.numpy().copy(),
                             lambda a: minitorch.tensor(a, dtype=minitorch.float64)):
        y = Square.apply(x).sum()
    y.backward()
    assert seen
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())


@pytest.mark.parametrize("device", DEVICES)
def test_save_on_cpu_gives_the_same_gradients(device):
    x, w = leaf((3, 4), 5, device), leaf((4, 4), 6, device)
    model_fn(x, w).backward()
    expected = [x.grad.cpu().numpy().copy(), w.grad.cpu().numpy().copy()]
    x.grad = w.grad = None
    with save_on_cpu(pin_memory=False):
        y = model_fn(x, w)
    y.backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), expected[0])
    np.testing.assert_allclose(w.grad.cpu().numpy(), expected[1])


class Block(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc1, self.fc2, self.drop = nn.Linear(n, n), nn.Linear(n, n), nn.Dropout(0.5)

    def forward(self, x):
        return self.fc2(self.drop(self.fc1(x).tanh())).sigmoid() + x


def run(model, x, use_ckpt, reentrant):
    minitorch.manual_seed(7)
    for p in model.parameters():
        p.grad = None
    x.grad = None
    y = checkpoint(model, x, use_reentrant=reentrant) if use_ckpt else model(x)
    # draw random numbers between forward and backward: the replay must not depend on them
    minitorch.rand(5, device=x.device)
    (y * y).sum().backward()
    return [x.grad.cpu().numpy().copy()] + [p.grad.cpu().numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpoint_gradients_equal_the_plain_run_with_dropout(reentrant, device):
    minitorch.manual_seed(0)
    model = Block(6).to(device)
    x = minitorch.randn(4, 6, device=device).requires_grad_()
    plain = run(model, x, False, reentrant)
    ckpt = run(model, x, True, reentrant)
    for a, b in zip(plain, ckpt):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("device", [d for d in DEVICES if "cuda" in str(d)])
def test_cuda_rng_state_round_trips(device):
    minitorch.manual_seed(5)
    state = minitorch.cuda.get_rng_state()
    assert state.dtype == minitorch.uint8 and tuple(state.shape) == (16,)
    a = minitorch.rand(4, device=device)
    minitorch.cuda.set_rng_state(state)
    np.testing.assert_array_equal(minitorch.rand(4, device=device).cpu().numpy(), a.cpu().numpy())
    with pytest.raises(TypeError):
        minitorch.cuda.set_rng_state(minitorch.zeros(3))


def test_checkpoint_replay_restores_the_generator_afterwards():
    minitorch.manual_seed(3)
    model = Block(4)
    x = minitorch.randn(2, 4, requires_grad=True)
    minitorch.manual_seed(11)
    checkpoint(model, x, use_reentrant=False).sum().backward()
    after_ckpt = minitorch.rand(3).numpy()
    minitorch.manual_seed(11)
    model(x).sum().backward()
    after_plain = minitorch.rand(3).numpy()
    np.testing.assert_array_equal(after_ckpt, after_plain)


def test_checkpoint_keeps_fewer_tensors_alive():
    layers = [nn.Linear(64, 64, dtype=minitorch.float64) for _ in range(6)]

    def piece(x):
        for layer in layers:
            x = layer(x).tanh()
        return x

    x = minitorch.randn(128, 64, dtype=minitorch.float64, requires_grad=True)

    def alive_after_forward(use_ckpt):
        before = minitorch.cpu.memory_allocated()
        y = checkpoint(piece, x, use_reentrant=False) if use_ckpt else piece(x)
        held = minitorch.cpu.memory_allocated() - before
        y.sum().backward()
        return held, x.grad.numpy().copy()

    plain_mem, plain_grad = alive_after_forward(False)
    x.grad = None
    ckpt_mem, ckpt_grad = alive_after_forward(True)
    np.testing.assert_allclose(ckpt_grad, plain_grad, rtol=1e-10)
    # the plain graph keeps each layer's input and tanh output; the checkpointed one the output only
    assert ckpt_mem * 4 <= plain_mem, (ckpt_mem, plain_mem)


@pytest.mark.parametrize("segments", [1, 2, 3])
def test_checkpoint_sequential(segments):
    minitorch.manual_seed(1)
    model = nn.Sequential(nn.Linear(5, 5), nn.Tanh(), nn.Linear(5, 5), nn.Sigmoid(), nn.Linear(5, 3))
    x = minitorch.randn(4, 5, requires_grad=True)
    model(x).pow(2).sum().backward()
    expected = [x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in model.parameters()]
    x.grad = None
    for p in model.parameters():
        p.grad = None
    y = checkpoint_sequential(model, segments, x, use_reentrant=False)
    y.pow(2).sum().backward()
    got = [x.grad.numpy()] + [p.grad.numpy() for p in model.parameters()]
    for a, b in zip(expected, got):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_checkpoint_kwargs_and_reentrant_kwargs_error():
    x = leaf((3,), 8)
    y = checkpoint(lambda x, scale: (x * scale).exp(), x, scale=2.0, use_reentrant=False)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(2 * x.detach().numpy()))
    with pytest.raises(ValueError, match="Unexpected keyword arguments"):
        checkpoint(lambda x, scale: x * scale, x, scale=2.0, use_reentrant=True)
