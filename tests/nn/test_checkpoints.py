"""``minitorch.save`` / ``load`` of whole checkpoints, as classic training scripts write them:
nested dicts, lists and tuples of tensors, numbers, strings, None and bools come back exactly,
and a model and optimizer restored from one resume training as if never stopped."""
from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest

import minitorch
from minitorch import nn


def test_a_checkpoint_round_trips_exactly(tmp_path, device):
    t = minitorch.arange(6, dtype=minitorch.float32, device=device).reshape(2, 3)
    obj = {"epoch": 5, "loss": 0.3, "name": "run-1", "done": False, "note": None, "inf": math.inf,
           "shapes": [(2, 3), [4]], "pair": (t, 2.0), "nested": {"a": [t.T, {"b": True}], 7: "seven", (1, 2): 3},
           "dtype": minitorch.float64, "device": minitorch.device("cpu"), "big": 2 ** 62, "empty": {}, "none": []}
    path = tmp_path / "ckpt.pt"
    minitorch.save(obj, path)
    back = minitorch.load(path)
    assert back["epoch"] == 5 and type(back["epoch"]) is int
    assert back["loss"] == 0.3 and type(back["loss"]) is float
    assert (back["name"], back["done"], back["note"], back["inf"]) == ("run-1", False, None, math.inf)
    assert back["shapes"] == [(2, 3), [4]] and type(back["shapes"][0]) is tuple
    assert isinstance(back["pair"], tuple) and back["pair"][1] == 2.0
    np.testing.assert_array_equal(back["pair"][0].numpy(), t.cpu().numpy())
    np.testing.assert_array_equal(back["nested"]["a"][0].numpy(), t.T.cpu().numpy())
    assert back["nested"]["a"][1] == {"b": True} and back["nested"][7] == "seven" and back["nested"][(1, 2)] == 3
    assert back["dtype"] is minitorch.float64 or back["dtype"] == minitorch.float64
    assert back["device"] == minitorch.device("cpu") and back["big"] == 2 ** 62
    assert back["empty"] == {} and back["none"] == []
    assert list(back) == list(obj)  # key order kept


def test_checkpoint_files_are_safetensors_with_the_structure_as_metadata(tmp_path):
    from safetensors import safe_open
    model = nn.Linear(3, 2)
    minitorch.save({"epoch": 1, "model_state_dict": model.state_dict()}, tmp_path / "c.safetensors")
    with safe_open(str(tmp_path / "c.safetensors"), "np") as f:
        assert set(f.keys()) == {"model_state_dict.weight", "model_state_dict.bias"}
        json.loads(f.metadata()["minitorch.structure"])


def test_file_objects_and_bfloat16_and_map_location(device):
    buf = io.BytesIO()
    minitorch.save({"w": [minitorch.ones(2, device=device).to(minitorch.bfloat16)], "step": 3}, buf)
    buf.seek(0)
    back = minitorch.load(buf, map_location=device, weights_only=True)
    assert back["step"] == 3 and back["w"][0].dtype == minitorch.bfloat16
    assert back["w"][0].device == minitorch.device(device)


@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_model_and_optimizer_resume_training_identically(tmp_path, opt_name):
    def make():
        minitorch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        kw = dict(lr=0.1, momentum=0.9) if opt_name == "SGD" else dict(lr=0.01, betas=(0.8, 0.99))
        return model, getattr(minitorch.optim, opt_name)(model.parameters(), **kw)

    x, y = minitorch.randn(16, 4), minitorch.randn(16, 1)

    def step(model, opt):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss.item()

    model, opt = make()
    for _ in range(3):
        loss = step(model, opt)
    path = tmp_path / "ckpt.tar"
    minitorch.save({"epoch": 3, "model_state_dict": model.state_dict(), "optimizer_state_dict": opt.state_dict(),
                    "loss": loss}, path)
    straight = [step(model, opt) for _ in range(3)]

    model2, opt2 = make()
    checkpoint = minitorch.load(path)
    model2.load_state_dict(checkpoint["model_state_dict"])
    opt2.load_state_dict(checkpoint["optimizer_state_dict"])
    assert checkpoint["epoch"] == 3 and checkpoint["loss"] == loss
    assert opt2.state_dict()["param_groups"] == opt.state_dict()["param_groups"]
    resumed = [step(model2, opt2) for _ in range(3)]
    assert resumed == straight
