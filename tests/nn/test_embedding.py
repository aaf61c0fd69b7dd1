"""``nn.Embedding`` / ``F.embedding``: lookups and their gradient (repeated indices add up)
against NumPy on every device, ``padding_idx`` (zero row, no gradient), ``from_pretrained``,
errors, reprs and state_dict as in PyTorch, and PyTorch itself when installed."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch
from conftest import CUDA_SKIP_REASON, TORCH_SKIP_REASON, launches, seeds, shapes
from minitorch import nn
from minitorch.nn import functional as F
from minitorch.testing import gradcheck


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


@settings(max_examples=20)
@given(idx_shape=shapes(min_dims=0, max_dims=3, min_side=0, max_side=4), num=st.integers(1, 6),
       dim=st.integers(1, 4), seed=seeds, pad=st.sampled_from([None, 0, -1]))
def test_embedding_values_and_gradient_match_numpy(device, idx_shape, num, dim, seed, pad):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((num, dim))
    idx = rng.integers(0, num, size=idx_shape).astype(np.int64)
    weight = minitorch.tensor(w, device=device, requires_grad=True)
    out = F.embedding(minitorch.tensor(idx, device=device), weight, padding_idx=pad)
    assert out.shape == idx_shape + (dim,) and out.device.type == device
    np.testing.assert_array_equal(to_np(out), w[idx])
    g = rng.standard_normal(idx_shape + (dim,))
    out.backward(minitorch.tensor(g, device=device))
    want = np.zeros_like(w)
    np.add.at(want, idx.reshape(-1), g.reshape(-1, dim))
    if pad is not None:
        want[pad % num] = 0.0
    np.testing.assert_allclose(to_np(weight.grad), want, rtol=1e-12, atol=1e-12)


def test_embedding_module(device):
    minitorch.manual_seed(0)
    emb = nn.Embedding(10, 3, padding_idx=2, device=device)
    assert emb.weight.shape == (10, 3) and emb.weight.requires_grad and emb.weight.device.type == device
    np.testing.assert_array_equal(to_np(emb.weight)[2], np.zeros(3, np.float32))
    idx = minitorch.tensor([[1, 2, 2], [9, 0, 2]], device=device)
    out = emb(idx)
    np.testing.assert_array_equal(to_np(out), to_np(emb.weight)[to_np(idx)])
    (out * out).sum().backward()
    grad = to_np(emb.weight.grad)
    np.testing.assert_array_equal(grad[2], np.zeros(3, np.float32))  # padding row: no gradient
    np.testing.assert_allclose(grad[1], 2 * to_np(emb.weight)[1], rtol=1e-6)
    np.testing.assert_array_equal(grad[[3, 4, 5, 6, 7, 8]], 0)
    assert list(emb.state_dict()) == ["weight"]
    assert repr(emb) == "Embedding(10, 3, padding_idx=2)"
    assert repr(nn.Embedding(4, 5)) == "Embedding(4, 5)"
    assert nn.Embedding(4, 2, padding_idx=-1).padding_idx == 3


def test_embedding_padding_row_keeps_its_value_without_gradient(device):
    w = minitorch.tensor(np.arange(12.0).reshape(4, 3), device=device, requires_grad=True)
    out = F.embedding(minitorch.tensor([3, 1, 3], device=device), w, padding_idx=3)
    np.testing.assert_array_equal(to_np(out), [[9, 10, 11], [3, 4, 5], [9, 10, 11]])
    out.sum().backward()
    np.testing.assert_array_equal(to_np(w.grad), [[0, 0, 0], [1, 1, 1], [0, 0, 0], [0, 0, 0]])


def test_embedding_init_is_standard_normal():
    minitorch.manual_seed(1)
    w = to_np(nn.Embedding(2000, 8).weight)
    assert abs(w.mean()) < 0.03 and abs(w.std() - 1.0) < 0.03


@pytest.mark.parametrize("pad", [None, 2])
def test_gradcheck_embedding(device, pad):
    # (the padding row is left out of the lookups: by design its gradient is not its derivative)
    w = minitorch.tensor(np.random.default_rng(0).standard_normal((4, 3)), device=device, requires_grad=True)
    idx = minitorch.tensor([[0, 1], [3, 1], [1, 1]], device=device)
    assert gradcheck(lambda w: F.embedding(idx, w, padding_idx=pad), (w,))


def test_from_pretrained(device):
    table = minitorch.tensor(np.arange(6.0).reshape(3, 2), device=device)
    emb = nn.Embedding.from_pretrained(table)
    assert not emb.weight.requires_grad and emb.num_embeddings == 3 and emb.embedding_dim == 2
    assert emb.weight.data_ptr() == table.data_ptr()  # shares memory, as in PyTorch
    np.testing.assert_array_equal(to_np(emb(minitorch.tensor([2, 0], device=device))), [[4, 5], [0, 1]])
    trainable = nn.Embedding.from_pretrained(table, freeze=False, padding_idx=0)
    assert trainable.weight.requires_grad and trainable.padding_idx == 0
    np.testing.assert_array_equal(to_np(trainable.weight)[0], [0, 1])  # pretrained padding row kept as given
    with pytest.raises(ValueError, match="2-dimensional"):
        nn.Embedding.from_pretrained(minitorch.zeros(3))


def test_embedding_errors(device):
    emb = nn.Embedding(3, 2).to(device)
    # (on a GPU the kernel's finding is reported at the next synchronization: here .cpu())
    with pytest.raises(IndexError, match="out of (range|bounds)"):
        emb(minitorch.tensor([0, 3], device=device)).cpu()
    with pytest.raises(IndexError, match="embedding: index -1 is out of bounds for dimension with size 3"):
        emb(minitorch.tensor([-1], device=device)).cpu()  # index_select would wrap it; PyTorch's embedding raises
    with pytest.raises(IndexError, match="embedding: index 3 is out of bounds for dimension with size 3"):
        emb(minitorch.tensor([[0], [3]], device=device)).cpu()
    with pytest.raises(TypeError, match="embedding: expected indices of dtype int64"):
        emb(minitorch.tensor([1.0], device=device))
    with pytest.raises(ValueError, match="padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)
    with pytest.raises(ValueError, match="padding_idx must be within num_embeddings"):
        F.embedding(minitorch.tensor([0]), minitorch.zeros(3, 2), padding_idx=-4)
    with pytest.raises(ValueError, match="embedding: weight must be 2-D"):
        F.embedding(minitorch.tensor([0]), minitorch.zeros(3))
    with pytest.raises(NotImplementedError, match="max_norm"):
        nn.Embedding(3, 2, max_norm=1.0)


def test_embedding_matches_torch(device):
    torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)
    theirs = torch.nn.Embedding(7, 4, padding_idx=5).double()
    ours = nn.Embedding(7, 4, padding_idx=5).double().to(device)
    assert repr(ours) == repr(theirs) and list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: minitorch.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    idx = np.random.default_rng(0).integers(0, 7, size=(3, 5)).astype(np.int64)
    g = np.random.default_rng(1).standard_normal((3, 5, 4))
    out, out_t = ours(minitorch.tensor(idx, device=device)), theirs(torch.tensor(idx))
    out.backward(minitorch.tensor(g, device=device))
    out_t.backward(torch.tensor(g))
    np.testing.assert_array_equal(to_np(out), out_t.detach().numpy())
    np.testing.assert_allclose(to_np(ours.weight.grad), theirs.weight.grad.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
@pytest.mark.parametrize("pad", [None, 1, -1])
def test_embedding_padding_costs_no_launch(pad):
    """padding_idx is kept out of the gradient by the scatter-add kernel itself (the padding
    row's picks add nothing): the lookup is one launch with or without it, the backward a zero
    fill and one scatter-add, as without padding."""
    device = "cuda"
    w = minitorch.randn(5, 3, device=device, requires_grad=True)
    idx = minitorch.tensor([[1, 4, 1], [0, 4, 2]], device=device)
    box = []
    fwd = launches(lambda: box.append(F.embedding(idx, w, padding_idx=pad)))
    assert len(fwd) == 1, fwd
    out = box[0]
    assert out.grad_fn.name() == "EmbeddingBackward0"  # PyTorch's node name
    g = minitorch.randn(2, 3, 3, device=device)
    bwd = launches(lambda: out.backward(g))
    assert len(bwd) == 2, bwd
    want = np.zeros((5, 3), np.float32)
    np.add.at(want, to_np(idx).reshape(-1), to_np(g).reshape(-1, 3))
    if pad is not None:
        want[pad % 5] = 0
    np.testing.assert_allclose(to_np(w.grad), want, rtol=1e-6, atol=1e-6)


def test_embedding_padding_double_backward(device):
    """create_graph: the weight's gradient is itself differentiable in the incoming gradient
    (index_add, then the padding row filled with zeros), so a second backward reaches g."""
    w = minitorch.tensor(np.arange(12.0).reshape(4, 3), device=device, requires_grad=True)
    idx = minitorch.tensor([3, 1, 3, 0], device=device)
    g = minitorch.tensor(np.random.default_rng(2).standard_normal((4, 3)), device=device, requires_grad=True)
    out = F.embedding(idx, w, padding_idx=3)
    (gw,) = minitorch.autograd.grad(out, w, g, create_graph=True)
    want = np.zeros((4, 3))
    np.add.at(want, [3, 1, 3, 0], to_np(g))
    want[3] = 0
    np.testing.assert_allclose(to_np(gw), want, rtol=1e-12)
    (gw * gw).sum().backward()  # d/dg of |gw|^2: 2 gw picked back at each index, none at the padding row
    expect = 2 * want[[3, 1, 3, 0]]
    np.testing.assert_allclose(to_np(g.grad), expect, rtol=1e-12)


def test_padding_row_gets_no_gradient_from_a_strided_gradient(device):
    """A gradient that reaches the embedding non-contiguous (x.t(), a transpose into Conv1d)
    still skips the padding row (the backward makes it contiguous for the rows kernel)."""
    minitorch.manual_seed(0)
    emb = nn.Embedding(5, 3, padding_idx=0).to(device)
    conv = nn.Conv1d(3, 2, 1).to(device)
    conv(emb(minitorch.tensor([[0, 1, 2, 0]], device=device)).transpose(1, 2)).sum().backward()
    np.testing.assert_array_equal(to_np(emb.weight.grad)[0], 0)
    assert np.abs(to_np(emb.weight.grad)[1]).sum() > 0
    emb.weight.grad = None
    x = emb(minitorch.tensor([0, 1, 2, 0], device=device))
    (x.t() * minitorch.randn(3, 4, device=device)).sum().backward()
    np.testing.assert_array_equal(to_np(emb.weight.grad)[0], 0)
