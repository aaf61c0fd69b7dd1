"""``nn.ModuleDict`` and ``nn.ParameterList``: registration, dict/list behaviour, state_dict
keys and reprs as in PyTorch."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch import nn
from conftest import TORCH_SKIP_REASON


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


def test_module_dict_registers_and_behaves_like_a_dict(device):
    d = nn.ModuleDict({"enc": nn.Linear(3, 4), "act": nn.ReLU()})
    d["dec"] = nn.Linear(4, 2)
    assert list(d) == ["enc", "act", "dec"] and len(d) == 3 and "act" in d and "nope" not in d
    assert list(d.keys()) == ["enc", "act", "dec"]
    assert [type(m).__name__ for m in d.values()] == ["Linear", "ReLU", "Linear"]
    assert [k for k, _ in d.items()] == ["enc", "act", "dec"]
    assert list(d.state_dict()) == ["enc.weight", "enc.bias", "dec.weight", "dec.bias"]
    assert len(list(d.parameters())) == 4
    d.to(device)
    assert all(p.device.type == device for p in d.parameters())
    x = minitorch.ones(2, 3, device=device)
    assert d["dec"](d["act"](d["enc"](x))).shape == (2, 2)
    popped = d.pop("act")
    assert isinstance(popped, nn.ReLU) and list(d) == ["enc", "dec"]
    del d["enc"]
    assert list(d.state_dict()) == ["dec.weight", "dec.bias"]
    d.update([("a", nn.Tanh()), ("b", nn.Sigmoid())])
    d.update(nn.ModuleDict({"c": nn.Identity()}))
    assert list(d) == ["dec", "a", "b", "c"]
    d.clear()
    assert len(d) == 0 and list(d.parameters()) == []


def test_module_dict_repr_and_errors():
    d = nn.ModuleDict({"a": nn.ReLU(), "b": nn.Linear(2, 3)})
    assert repr(d) == ("ModuleDict(\n  (a): ReLU()\n  (b): Linear(in_features=2, out_features=3, bias=True)\n)")
    with pytest.raises(TypeError, match="not a Module subclass"):
        d["c"] = 3
    with pytest.raises(TypeError, match="keys must be strings"):
        d[1] = nn.ReLU()
    with pytest.raises(ValueError, match="element #0"):
        d.update([nn.ReLU()])
    with pytest.raises(KeyError):
        d["missing"]


def test_module_dict_inside_a_model_state_dict():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = nn.ModuleDict({"cls": nn.Linear(2, 3), "reg": nn.Linear(2, 1, bias=False)})

    assert list(Net().state_dict()) == ["heads.cls.weight", "heads.cls.bias", "heads.reg.weight"]


def test_parameter_list(device):
    ps = nn.ParameterList([nn.Parameter(minitorch.zeros(2, 3)), minitorch.ones(4)])
    assert isinstance(ps[1], nn.Parameter) and ps[1].requires_grad  # a plain tensor is wrapped
    ps.append(nn.Parameter(minitorch.zeros(1)))
    ps += [minitorch.zeros(5, dtype=minitorch.float64)]
    assert len(ps) == 4 and list(ps.state_dict()) == ["0", "1", "2", "3"]
    assert [n for n, _ in ps.named_parameters()] == ["0", "1", "2", "3"]
    assert ps[-1].shape == (5,) and ps[-1] is list(ps)[3]
    assert isinstance(ps[1:3], nn.ParameterList) and [p.shape for p in ps[1:3]] == [(4,), (1,)]
    new = nn.Parameter(minitorch.full((4,), 7.0))
    ps[1] = new
    assert ps[1] is new and ps.state_dict()["1"].data_ptr() == new.data_ptr()
    ps.to(device)
    assert all(p.device.type == device for p in ps)
    with pytest.raises(IndexError):
        ps[4]
    with pytest.raises(TypeError, match="ParameterList: expected a Parameter or a Tensor"):
        ps.append(3.0)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.ws = nn.ParameterList([minitorch.zeros(2), minitorch.zeros(3)])

    assert list(Net().state_dict()) == ["ws.0", "ws.1"]


def test_module_list_repr_folds_runs_of_identical_modules():
    # PyTorch 2.x: consecutive modules with the same repr are one "(i-j): n x ..." entry.
    ml = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2),
                        nn.Sequential(nn.ReLU()), nn.Sequential(nn.ReLU())])
    assert repr(ml) == ("ModuleList(\n"
                        "  (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)\n"
                        "  (3): ReLU()\n"
                        "  (4): Linear(in_features=2, out_features=2, bias=True)\n"
                        "  (5-6): 2 x Sequential(\n"
                        "    (0): ReLU()\n"
                        "  )\n"
                        ")")
    assert repr(nn.ModuleList()) == "ModuleList()"
    assert repr(nn.ModuleList([nn.Tanh()])) == "ModuleList(\n  (0): Tanh()\n)"


def test_module_list_repr_matches_torch():
    torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)
    if int(torch.__version__.split(".")[0]) < 2:
        pytest.skip("PyTorch 1.x printed every module of a ModuleList; minitorch follows 2.x")
    ours = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU(), nn.Sequential(nn.Tanh()),
                          nn.Sequential(nn.Tanh())])
    theirs = torch.nn.ModuleList([torch.nn.Linear(2, 2), torch.nn.Linear(2, 2), torch.nn.ReLU(),
                                  torch.nn.Sequential(torch.nn.Tanh()), torch.nn.Sequential(torch.nn.Tanh())])
    assert repr(ours) == repr(theirs)


def test_parameter_list_repr():
    ps = nn.ParameterList([nn.Parameter(minitorch.zeros(2, 3)), nn.Parameter(minitorch.zeros(4, dtype=minitorch.float64))])
    assert repr(ps) == ("ParameterList(\n"
                        "    (0): Parameter containing: [minitorch.float32 of size 2x3]\n"
                        "    (1): Parameter containing: [minitorch.float64 of size 4]\n)")
    assert repr(nn.ParameterList()) == "ParameterList()"


def test_containers_match_torch_keys():
    torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)
    ours = nn.ModuleDict({"a": nn.Linear(2, 3), "n": nn.BatchNorm1d(3)})
    theirs = torch.nn.ModuleDict({"a": torch.nn.Linear(2, 3), "n": torch.nn.BatchNorm1d(3)})
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    ours_pl = nn.ParameterList([minitorch.zeros(2, 3), minitorch.zeros(4)])
    theirs_pl = torch.nn.ParameterList([torch.zeros(2, 3), torch.zeros(4)])
    assert list(ours_pl.state_dict()) == list(theirs_pl.state_dict())
    assert repr(ours_pl).replace("minitorch", "torch") == repr(theirs_pl)
