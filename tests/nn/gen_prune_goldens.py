"""Writes tests/nn/prune_goldens.npz: masks from PyTorch's torch.nn.utils.prune on fixed
weights, for tests/nn/test_prune.py. Run with a Python that has PyTorch (CI has none):

    /usr/bin/python3 tests/nn/gen_prune_goldens.py

Each case stores its inputs (``<case>/w...``) and PyTorch's masks (``<case>/mask...``).
The "ties" cases use small integers so many |w| are equal at the cut: which of them PyTorch's
CPU topk drops is what the test pins down (both the partial_sort path, k*64 <= n, and the
nth_element path). PyTorch 2.11's CPU topk still makes that choice (aten/src/ATen/native/TopKImpl.h:
std::partial_sort when k * 64 <= n, else std::nth_element), so 1.13's masks are 2.11's."""
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn.utils import prune

OUT = Path(__file__).with_name("prune_goldens.npz")
rs = np.random.RandomState(0)
g = {}


def lin(w):
    m = nn.Linear(w.shape[1], w.shape[0], bias=False)
    with torch.no_grad():
        m.weight.copy_(torch.from_numpy(w))
    return m


def conv(w):
    m = nn.Conv2d(w.shape[1], w.shape[0], w.shape[2], bias=False)
    with torch.no_grad():
        m.weight.copy_(torch.from_numpy(w))
    return m


def mask(m, name="weight"):
    return getattr(m, name + "_mask").detach().numpy().copy()


# 1. l1_unstructured, float and int amounts (0.0625 * 40 = 2.5 rounds half to even: 2)
w = rs.randn(5, 8).astype(np.float32)
g["l1/w"] = w
for tag, amount in [("f035", 0.35), ("i7", 7), ("f0", 0.0), ("f1", 1.0), ("f0625", 0.0625)]:
    m = lin(w.copy())
    prune.l1_unstructured(m, "weight", amount=amount)
    g[f"l1/mask_{tag}"] = mask(m)

# 2. iterative: l1 0.3, l1 0.3 of what is left, ln_structured n=2 dim=0 0.25, l1 again 2
m = lin(w.copy())
prune.l1_unstructured(m, "weight", amount=0.3)
g["iter/mask1"] = mask(m)
prune.l1_unstructured(m, "weight", amount=0.3)
g["iter/mask2"] = mask(m)
prune.ln_structured(m, "weight", amount=0.25, n=2, dim=0)
g["iter/mask3"] = mask(m)
prune.l1_unstructured(m, "weight", amount=2)
g["iter/mask4"] = mask(m)
prune.remove(m, "weight")
g["iter/removed"] = m.weight.detach().numpy().copy()

# 3. ln_structured on a conv weight: n in (1, 2, inf), several dims
wc = rs.randn(6, 4, 3, 3).astype(np.float32)
g["ln/w"] = wc
for n_tag, n in [("1", 1), ("2", 2), ("inf", float("inf")), ("ninf", float("-inf"))]:
    for dim in (0, 1, -1):
        for amount in (0.5, 1):
            m = conv(wc.copy())
            prune.ln_structured(m, "weight", amount=amount, n=n, dim=dim)
            g[f"ln/mask_n{n_tag}_d{dim}_a{amount}"] = mask(m)

# 4. global_unstructured over three modules
ws = [rs.randn(4, 6).astype(np.float32) * s for s in (1.0, 0.3, 2.0)]
ws.append(rs.randn(3, 2, 3, 3).astype(np.float32))
for i, x in enumerate(ws):
    g[f"global/w{i}"] = x
mods = [lin(x.copy()) for x in ws[:3]] + [conv(ws[3].copy())]
prune.l1_unstructured(mods[0], "weight", amount=5)  # one already pruned
prune.global_unstructured([(m, "weight") for m in mods], pruning_method=prune.L1Unstructured, amount=0.4)
for i, m in enumerate(mods):
    g[f"global/mask{i}"] = mask(m)

# 5. importance_scores
sc = rs.rand(5, 8).astype(np.float32)
g["imp/scores"] = sc
m = lin(w.copy())
prune.l1_unstructured(m, "weight", amount=0.5, importance_scores=torch.from_numpy(sc))
g["imp/mask_l1"] = mask(m)
m = lin(w.copy())
prune.ln_structured(m, "weight", amount=2, n=1, dim=1, importance_scores=torch.from_numpy(sc))
g["imp/mask_ln"] = mask(m)
mods = [lin(w.copy()), lin(ws[0].copy())]
prune.global_unstructured([(m, "weight") for m in mods], prune.L1Unstructured,
                          importance_scores={(mods[0], "weight"): torch.from_numpy(sc)}, amount=30)
g["imp/mask_g0"], g["imp/mask_g1"] = mask(mods[0]), mask(mods[1])

# 6. ties: small integers (many equal |w|), both topk paths, and re-pruning after remove
for tag, shape, amounts in [("small", (6, 10), (0.3, 17, 0.5)), ("mid", (40, 50), (0.37, 0.61, 11, 25)),
                            ("big", (128, 100), (0.05, 40, 150, 0.5, 0.93))]:
    wt = rs.randint(-3, 4, size=shape).astype(np.float32)
    g[f"ties_{tag}/w"] = wt
    for amount in amounts:
        m = lin(wt.copy())
        prune.l1_unstructured(m, "weight", amount=amount)
        g[f"ties_{tag}/mask_{amount}"] = mask(m)
    m = lin(wt.copy())
    prune.l1_unstructured(m, "weight", amount=amounts[0])
    prune.remove(m, "weight")
    prune.l1_unstructured(m, "weight", amount=amounts[-1])
    g[f"ties_{tag}/mask_again"] = mask(m)
    for dim in (0, 1):
        m = lin(np.sign(wt).copy())  # whole channels of equal norm
        prune.ln_structured(m, "weight", amount=0.5, n=1, dim=dim)
        g[f"ties_{tag}/mask_ln{dim}"] = mask(m)

# 7. NaN ranks as the largest |w|
wn = w.copy()
wn[1, 2] = np.nan
wn[3, 3] = np.nan
g["nan/w"] = wn
m = lin(wn.copy())
prune.l1_unstructured(m, "weight", amount=38)
g["nan/mask"] = mask(m)

# 8. custom_from_mask then l1 on top
cm = (rs.rand(5, 8) > 0.5).astype(np.float32)
g["custom/mask_in"] = cm
m = lin(w.copy())
prune.custom_from_mask(m, "weight", torch.from_numpy(cm))
prune.l1_unstructured(m, "weight", amount=0.5)
g["custom/mask"] = mask(m)
g["custom/keys"] = np.array(sorted(m.state_dict().keys()))

np.savez_compressed(OUT, **g)
print(f"wrote {OUT} ({OUT.stat().st_size} bytes, {len(g)} arrays, torch {torch.__version__})")
