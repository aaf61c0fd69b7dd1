"""Five optimizer steps on a small MLP against PyTorch with the same weights and data.

minitorch runs on every device; PyTorch, the reference, on the CPU. Skipped when
PyTorch is not installed (it is not a minitorch dependency).
"""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch import nn
from conftest import TORCH_SKIP_REASON

torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


CASES = {
    "sgd_momentum": (lambda ps: minitorch.optim.SGD(ps, lr=0.1, momentum=0.9),
                     lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9)),
    "sgd_nesterov_wd": (lambda ps: minitorch.optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-2),
                        lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-2)),
    "sgd_dampening": (lambda ps: minitorch.optim.SGD(ps, lr=0.1, momentum=0.5, dampening=0.5),
                      lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.5, dampening=0.5)),
    "adam": (lambda ps: minitorch.optim.Adam(ps, lr=0.01), lambda ps: torch.optim.Adam(ps, lr=0.01)),
    "adam_l2": (lambda ps: minitorch.optim.Adam(ps, lr=0.01, weight_decay=0.1, betas=(0.8, 0.99)),
                lambda ps: torch.optim.Adam(ps, lr=0.01, weight_decay=0.1, betas=(0.8, 0.99))),
    "adamw": (lambda ps: minitorch.optim.AdamW(ps, lr=0.01), lambda ps: torch.optim.AdamW(ps, lr=0.01)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_five_steps_match_torch(case, device):
    make_ours, make_theirs = CASES[case]
    ours = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 4)).double().to(device)
    theirs = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4)).double()
    with torch.no_grad():
        for p, tp in zip(ours.parameters(), theirs.parameters()):
            tp.copy_(torch.from_numpy(to_np(p)))
    opt, topt = make_ours(ours.parameters()), make_theirs(theirs.parameters())
    rng = np.random.default_rng(0)
    for step in range(5):
        x = rng.standard_normal((10, 6))
        y = rng.integers(0, 4, 10)
        opt.zero_grad()
        loss = nn.functional.cross_entropy(ours(minitorch.tensor(x, device=device)), minitorch.tensor(y, device=device))
        loss.backward()
        opt.step()
        topt.zero_grad()
        tloss = torch.nn.functional.cross_entropy(theirs(torch.from_numpy(x)), torch.from_numpy(y))
        tloss.backward()
        topt.step()
        np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-10, err_msg=f"loss at step {step}")
        for (n, p), tp in zip(ours.named_parameters(), theirs.parameters()):
            assert p.device == device, n
            np.testing.assert_allclose(to_np(p), tp.detach().numpy(), rtol=1e-9, atol=1e-12,
                                       err_msg=f"{n} after step {step + 1}")
    assert len(opt.state) == 4  # every case keeps state (momentum buffers or Adam moments) ...
    for s in opt.state.values():  # ... on the parameters' device
        assert all(v.device == device for v in s.values() if isinstance(v, minitorch.Tensor))
