"""``nn.utils.prune``: masks, iterative pruning, ``global_unstructured``, ``remove`` and
``importance_scores`` against PyTorch's (goldens written by gen_prune_goldens.py with
PyTorch, including which of several equal |w| its CPU topk drops); the ``_orig``/``_mask``
reparametrization (state_dict keys, hook, gradients only into kept weights), amount
validation errors, and minitorch's 2:4 ``semi_structured`` / ``sparsity`` helpers."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.nn.utils import prune

G = np.load(Path(__file__).with_name("prune_goldens.npz"))


def to_np(t):
    return np.array(t.detach().cpu().numpy(), copy=True)


def lin(w, device="cpu"):
    m = nn.Linear(w.shape[1], w.shape[0], bias=False)
    with minitorch.no_grad():
        m.weight.copy_(minitorch.tensor(w))
    return m.to(device)


def conv(w, device="cpu"):
    m = nn.Conv2d(w.shape[1], w.shape[0], w.shape[2], bias=False)
    with minitorch.no_grad():
        m.weight.copy_(minitorch.tensor(w))
    return m.to(device)


def mask(m, name="weight"):
    return to_np(getattr(m, name + "_mask"))


@pytest.mark.parametrize("tag,amount", [("f035", 0.35), ("i7", 7), ("f0", 0.0), ("f1", 1.0), ("f0625", 0.0625)])
def test_l1_unstructured_matches_pytorch(device, tag, amount):
    m = lin(G["l1/w"], device)
    assert prune.l1_unstructured(m, "weight", amount=amount) is m
    np.testing.assert_array_equal(mask(m), G[f"l1/mask_{tag}"])
    np.testing.assert_array_equal(to_np(m.weight), G["l1/w"] * G[f"l1/mask_{tag}"])


def test_iterative_pruning_and_remove_match_pytorch(device):
    m = lin(G["l1/w"], device)
    prune.l1_unstructured(m, "weight", amount=0.3)
    np.testing.assert_array_equal(mask(m), G["iter/mask1"])
    orig = m.weight_orig
    prune.l1_unstructured(m, "weight", amount=0.3)  # 30% of what is left
    np.testing.assert_array_equal(mask(m), G["iter/mask2"])
    prune.ln_structured(m, "weight", amount=0.25, n=2, dim=0)  # of the rows still alive
    np.testing.assert_array_equal(mask(m), G["iter/mask3"])
    prune.l1_unstructured(m, "weight", amount=2)
    np.testing.assert_array_equal(mask(m), G["iter/mask4"])
    hooks = [h for h in m._forward_pre_hooks.values() if isinstance(h, prune.BasePruningMethod)]
    assert len(hooks) == 1 and isinstance(hooks[0], prune.PruningContainer) and len(hooks[0]) == 4
    assert [type(h).__name__ for h in hooks[0]] == ["L1Unstructured", "L1Unstructured", "LnStructured",
                                                     "L1Unstructured"]
    assert m.weight_orig is orig  # the same Parameter all along
    prune.remove(m, "weight")
    assert m.weight is orig and isinstance(m.weight, nn.Parameter)
    np.testing.assert_array_equal(to_np(m.weight), G["iter/removed"])
    assert list(m.state_dict()) == ["weight"] and not prune.is_pruned(m)
    assert not any(isinstance(h, prune.BasePruningMethod) for h in m._forward_pre_hooks.values())


@pytest.mark.parametrize("n_tag,n", [("1", 1), ("2", 2), ("inf", float("inf")), ("ninf", float("-inf"))])
def test_ln_structured_matches_pytorch(n_tag, n):
    for dim in (0, 1, -1):
        for amount in (0.5, 1):
            m = conv(G["ln/w"])
            prune.ln_structured(m, "weight", amount=amount, n=n, dim=dim)
            np.testing.assert_array_equal(mask(m), G[f"ln/mask_n{n_tag}_d{dim}_a{amount}"], err_msg=f"dim={dim}")


def test_global_unstructured_matches_pytorch(device):
    ws = [G[f"global/w{i}"] for i in range(4)]
    mods = [lin(w, device) for w in ws[:3]] + [conv(ws[3], device)]
    prune.l1_unstructured(mods[0], "weight", amount=5)
    prune.global_unstructured(((m, "weight") for m in mods), pruning_method=prune.L1Unstructured, amount=0.4)
    for i, m in enumerate(mods):
        np.testing.assert_array_equal(mask(m), G[f"global/mask{i}"], err_msg=f"module {i}")
    total = sum(w.size for w in ws)
    assert sum(int((mask(m) == 0).sum()) for m in mods) == 5 + round(0.4 * (total - 5))


def test_importance_scores_match_pytorch():
    sc = minitorch.tensor(G["imp/scores"])
    m = lin(G["l1/w"])
    prune.l1_unstructured(m, "weight", amount=0.5, importance_scores=sc)
    np.testing.assert_array_equal(mask(m), G["imp/mask_l1"])
    m = lin(G["l1/w"])
    prune.ln_structured(m, "weight", amount=2, n=1, dim=1, importance_scores=sc)
    np.testing.assert_array_equal(mask(m), G["imp/mask_ln"])
    mods = [lin(G["l1/w"]), lin(G["global/w0"])]
    prune.global_unstructured([(m, "weight") for m in mods], prune.L1Unstructured,
                              importance_scores={(mods[0], "weight"): sc}, amount=30)
    np.testing.assert_array_equal(mask(mods[0]), G["imp/mask_g0"])
    np.testing.assert_array_equal(mask(mods[1]), G["imp/mask_g1"])
    with pytest.raises(AssertionError, match="same shape"):
        prune.l1_unstructured(lin(G["l1/w"]), "weight", 0.5, importance_scores=minitorch.ones(3))


@pytest.mark.parametrize("tag,amounts", [("small", (0.3, 17, 0.5)), ("mid", (0.37, 0.61, 11, 25)),
                                         ("big", (0.05, 40, 150, 0.5, 0.93))])
def test_ties_are_broken_as_pytorch_cpu(tag, amounts):
    """Many equal |w| at the cut: the same ones as PyTorch's CPU topk (std::partial_sort
    when k * 64 <= n, std::nth_element otherwise) are pruned."""
    wt = G[f"ties_{tag}/w"]
    for amount in amounts:
        m = lin(wt)
        prune.l1_unstructured(m, "weight", amount=amount)
        np.testing.assert_array_equal(mask(m), G[f"ties_{tag}/mask_{amount}"], err_msg=f"amount={amount}")
    m = lin(wt)
    prune.l1_unstructured(m, "weight", amount=amounts[0])
    prune.remove(m, "weight")
    prune.l1_unstructured(m, "weight", amount=amounts[-1])  # the zeros of the first pruning tie
    np.testing.assert_array_equal(mask(m), G[f"ties_{tag}/mask_again"])
    for dim in (0, 1):
        m = lin(np.sign(wt))
        prune.ln_structured(m, "weight", amount=0.5, n=1, dim=dim)
        np.testing.assert_array_equal(mask(m), G[f"ties_{tag}/mask_ln{dim}"], err_msg=f"dim={dim}")


def test_nan_counts_as_largest():
    m = lin(G["nan/w"])
    prune.l1_unstructured(m, "weight", amount=38)
    np.testing.assert_array_equal(mask(m), G["nan/mask"])


def test_custom_from_mask_then_l1_and_state_dict_keys(device):
    m = lin(G["l1/w"], device)
    prune.custom_from_mask(m, "weight", minitorch.tensor(G["custom/mask_in"]))
    prune.l1_unstructured(m, "weight", amount=0.5)
    np.testing.assert_array_equal(mask(m), G["custom/mask"])
    assert sorted(m.state_dict()) == list(G["custom/keys"]) == ["weight_mask", "weight_orig"]


def test_reparametrization_state_dict_and_hook(device):
    m = nn.Linear(6, 4).to(device)
    w0 = to_np(m.weight)
    prune.random_unstructured(m, "weight", amount=0.5)
    assert list(m.state_dict()) == ["bias", "weight_orig", "weight_mask"]
    assert [n for n, _ in m.named_parameters()] == ["bias", "weight_orig"]
    assert [n for n, _ in m.named_buffers()] == ["weight_mask"]
    assert int((mask(m) == 0).sum()) == 12 and prune.is_pruned(m) and prune.sparsity(m) == 0.5
    np.testing.assert_array_equal(to_np(m.weight_orig), w0)
    # the hook recomputes weight from weight_orig before each forward
    with minitorch.no_grad():
        m.weight_orig.fill_(2.0)
    x = minitorch.ones(3, 6, device=device)
    y = m(x)
    np.testing.assert_allclose(to_np(m.weight), 2.0 * mask(m))
    np.testing.assert_allclose(to_np(y), np.ones((3, 6)) @ (2.0 * mask(m)).T + to_np(m.bias), rtol=1e-6)
    # a state_dict round trip through an unpruned copy needs the same keys: strict load fails
    fresh = nn.Linear(6, 4)
    with pytest.raises(RuntimeError, match="Missing key"):
        fresh.load_state_dict(m.state_dict())
    prune.identity(fresh, "weight")
    fresh.load_state_dict({k: v.cpu() for k, v in m.state_dict().items()})
    np.testing.assert_array_equal(mask(fresh), mask(m))


def test_gradient_reaches_only_kept_weights(device):
    m = nn.Linear(5, 3).double().to(device)
    prune.l1_unstructured(m, "weight", amount=0.6)
    x = minitorch.tensor(np.random.default_rng(0).standard_normal((4, 5)), device=device)
    m(x).pow(2).sum().backward()
    g, keep = to_np(m.weight_orig.grad), mask(m)
    assert (g[keep == 0] == 0).all() and (g[keep == 1] != 0).all()
    assert m.weight_mask.grad is None and not m.weight_mask.requires_grad
    # an optimizer step leaves the pruned weights' effective value at zero
    opt = minitorch.optim.SGD(m.parameters(), lr=0.1)
    opt.step()
    m(x)
    assert (to_np(m.weight)[keep == 0] == 0).all()


def test_random_methods_prune_the_right_counts(device):
    m = conv(np.random.default_rng(1).standard_normal((6, 4, 3, 3)).astype(np.float32), device)
    prune.random_structured(m, "weight", amount=2, dim=0)
    kept = mask(m).reshape(6, -1)
    assert sorted(kept.min(1)) == sorted(kept.max(1)) and kept.max(1).sum() == 4
    prune.random_unstructured(m, "weight", amount=0.25)  # a quarter of the 144 left
    assert int(mask(m).sum()) == 144 - 36
    prune.random_structured(m, "weight", amount=1, dim=1)  # of the 4 input channels
    assert (mask(m).sum(axis=(0, 2, 3)) == 0).sum() == 1


@pytest.mark.parametrize("amount,exc,msg", [
    (-1, ValueError, "amount=-1 should either be a float in the range"),
    (1.5, ValueError, "amount=1.5 should either be a float in the range"),
    (-0.1, ValueError, "amount=-0.1 should either be"),
    ("0.5", TypeError, "Invalid type for amount: 0.5. Must be int or float."),
    (None, TypeError, "Invalid type for amount"),
    (41, ValueError, "amount=41 should be smaller than the number of parameters to prune=40"),
])
def test_bad_amounts_raise_and_leave_the_module_alone(amount, exc, msg):
    m = lin(G["l1/w"])
    w = m.weight
    with pytest.raises(exc, match=msg):
        prune.l1_unstructured(m, "weight", amount=amount)
    assert m.weight is w and list(m.state_dict()) == ["weight"] and not prune.is_pruned(m)


def test_other_errors():
    m = lin(G["l1/w"])
    with pytest.raises(ValueError, match="amount=6 should be smaller than the number of parameters to prune=5"):
        prune.ln_structured(m, "weight", amount=6, n=2, dim=0)
    with pytest.raises(IndexError, match="Invalid index 2 for tensor of size"):
        prune.ln_structured(m, "weight", amount=1, n=2, dim=2)
    b = nn.Linear(3, 2)
    with pytest.raises(ValueError, match="Structured pruning can only be applied to multidimensional tensors"):
        prune.random_structured(b, "bias", amount=1, dim=0)
    with pytest.raises(ValueError, match="Parameter 'weight' of module .* has to be pruned before pruning can be removed"):
        prune.remove(nn.Linear(2, 2), "weight")
    with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE supported'):
        prune.global_unstructured([(b, "weight")], prune.LnStructured, amount=1, n=2, dim=0)
    with pytest.raises(TypeError, match="importance_scores must be of type dict"):
        prune.global_unstructured([(b, "weight")], prune.L1Unstructured, importance_scores=[1], amount=1)
    with pytest.raises(TypeError, match="parameters is not an Iterable"):
        prune.global_unstructured(3, prune.L1Unstructured, amount=1)
    c = prune.PruningContainer(prune.L1Unstructured.apply(nn.Linear(2, 2), "weight", 1))
    other = prune.L1Unstructured(1)
    other._tensor_name = "bias"
    with pytest.raises(ValueError, match="Can only add pruning methods acting on the parameter named 'weight'"):
        c.add_pruning_method(other)
    with pytest.raises(TypeError, match="is not a BasePruningMethod subclass"):
        c.add_pruning_method(3)


def test_prune_method_on_a_bare_tensor():
    t = minitorch.tensor(G["l1/w"])
    out = prune.L1Unstructured(amount=7).prune(t)
    np.testing.assert_array_equal(to_np(out), G["l1/w"] * G["l1/mask_i7"])


def test_semi_structured_2_4(device):
    rng = np.random.default_rng(2)
    w = rng.standard_normal((3, 8)).astype(np.float32)
    m = lin(w, device)
    prune.semi_structured(m, "weight")
    keep = mask(m).reshape(-1, 4)
    groups = np.abs(w).reshape(-1, 4)
    assert (keep.sum(1) == 2).all()
    expect = np.zeros_like(groups)
    np.put_along_axis(expect, np.argsort(-groups, axis=1, kind="stable")[:, :2], 1.0, axis=1)
    np.testing.assert_array_equal(keep, expect)
    assert prune.sparsity(m) == 0.5 and prune.sparsity(m.weight) == 0.5
    # on a conv weight the groups run along in * kh * kw; already-pruned entries go first
    c = conv(rng.standard_normal((2, 4, 2, 2)).astype(np.float32), device)
    prune.l1_unstructured(c, "weight", amount=10)
    prune.semi_structured(c, "weight")
    k = mask(c).reshape(-1, 4)
    assert (k.sum(1) <= 2).all() and prune.sparsity(c) >= 0.5
    with pytest.raises(ValueError, match="a row of 9 weights .* does not split into groups of 4"):
        prune.semi_structured(nn.Conv2d(1, 2, 3), "weight")
    prune.remove(c, "weight")
    assert prune.sparsity(c.weight) == prune.sparsity(c) >= 0.5


def test_ties_on_cuda_prune_the_lowest_positions(device):
    """PyTorch's CUDA topk (and minitorch's on every device) takes equal values in order of
    position; on the CPU PyTorch's differs (test above), and pruning follows each."""
    wt = G["ties_mid/w"]
    m = lin(wt, device)
    prune.l1_unstructured(m, "weight", amount=0.37)
    k = round(0.37 * wt.size)
    expect = np.ones(wt.size, np.float32)
    expect[np.argsort(np.abs(wt).ravel(), kind="stable")[:k]] = 0
    if device == "cpu":
        np.testing.assert_array_equal(mask(m), G["ties_mid/mask_0.37"])
        assert (mask(m).ravel() != expect).any()  # the two rules do differ on this input
    else:
        np.testing.assert_array_equal(mask(m).ravel(), expect)
