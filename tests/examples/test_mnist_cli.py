"""The main command, ``python -m minitorch.examples.mnist``, as a student meets it.

No network is needed: the offline case points the download at an address where nothing
listens (``MINITORCH_DATA_MIRROR``). Runs that train use ``--limit`` so they take seconds.
"""
from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from minitorch.examples.mnist import _settings, make_parser, parse_args, train

FASHION_DIR = Path("/usr/share/datasets/fashion-mnist")
UNREACHABLE = "http://127.0.0.1:9/"  # the discard port: connection refused at once

needs_mnist = pytest.mark.skipif(not os.environ.get("MINITORCH_DATA"),
                                 reason="MINITORCH_DATA is not set (point it at a folder with the MNIST IDX files)")
needs_fashion = pytest.mark.skipif(not FASHION_DIR.is_dir(),
                                   reason=f"{FASHION_DIR} is absent (apt-get install dataset-fashion-mnist)")
mnist_installed = any((Path("/usr/share/datasets") / sub / "t10k-labels-idx1-ubyte.gz").exists()
                      for sub in ("", "mnist", "MNIST", "MNIST/raw"))


def run_cli(tmp_path: Path, *args: str, env_extra=None, drop_data_env=True) -> subprocess.CompletedProcess:
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    if drop_data_env:
        env.pop("MINITORCH_DATA", None)
    env.update(env_extra or {})
    cmd = [sys.executable, "-m", "minitorch.examples.mnist", "--out", str(tmp_path / "runs"), *args]
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(mnist_installed, reason="MNIST is installed under /usr/share/datasets, so it is found")
def test_offline_download_explains_what_to_do(tmp_path):
    r = run_cli(tmp_path, "--download", "--epochs", "1", env_extra={"MINITORCH_DATA_MIRROR": UNREACHABLE})
    assert r.returncode != 0
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout
    err = r.stderr
    assert "--download could not fetch MNIST" in err
    assert "connection refused" in err
    for stem in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                 "t10k-labels-idx1-ubyte"):
        assert f"{UNREACHABLE}{stem}.gz" in err  # the addresses to fetch by hand
    assert "--data DIR" in err and "MINITORCH_DATA" in err
    assert "root=" not in err and "download=True" not in err  # the command's words, not the API's


@pytest.mark.skipif(mnist_installed, reason="MNIST is installed under /usr/share/datasets, so it is found")
def test_missing_data_without_download_names_the_flags(tmp_path):
    r = run_cli(tmp_path, "--epochs", "1")
    assert r.returncode != 0
    assert "Traceback" not in r.stderr
    err = r.stderr
    assert "could not find the MNIST files" in err
    assert "--download" in err and "--data DIR" in err and "MINITORCH_DATA" in err
    assert str(tmp_path / "cache" / "minitorch") in err  # the cache folder is named
    assert "root=" not in err and "download=True" not in err


@needs_mnist
def test_fashion_mnist_given_mnist_folder_refuses(tmp_path):
    r = run_cli(tmp_path, "--dataset", "fashion-mnist", "--data", os.environ["MINITORCH_DATA"], "--epochs", "1")
    assert r.returncode != 0
    assert "Traceback" not in r.stderr
    assert "holds MNIST's train-images-idx3-ubyte, not FashionMNIST's" in r.stderr


@needs_mnist
@needs_fashion
def test_fashion_mnist_with_mnist_in_env_trains_on_fashion(tmp_path):
    r = run_cli(tmp_path, "--dataset", "fashion-mnist", "--epochs", "1", "--limit", "640", drop_data_env=False)
    assert r.returncode == 0, r.stderr
    assert f"from {FASHION_DIR}" in r.stdout
    assert "holds MNIST's" in r.stderr  # the skipped MINITORCH_DATA files are mentioned


@needs_mnist
def test_redirected_output_has_one_line_per_epoch(tmp_path):
    r = run_cli(tmp_path, "--epochs", "2", "--limit", "640", drop_data_env=False)
    assert r.returncode == 0, r.stderr
    assert "\r" not in r.stderr and "\r" not in r.stdout  # no progress-bar redraws in a log
    epochs = [line for line in r.stdout.splitlines() if line.startswith("epoch ")]
    assert len(epochs) == 2 and "test accuracy" in epochs[0]
    assert "mnist-mlp-relu.json" in r.stdout  # the run's record is named
    assert (tmp_path / "runs" / "mnist-mlp-relu.json").is_file()


def test_plot_title_names_the_settings():
    args = parse_args(["--model", "cnn", "--lr", "0.05", "--momentum", "0.9", "--epochs", "3", "--limit", "100"])
    args.schedule = "cosine"
    title = _settings(args)
    for part in ("mnist", "cnn (relu)", "sgd lr 0.05 momentum 0.9", "cosine", "batch 64", "3 epochs", "seed 0",
                 "cpu", "first 100 images"):
        assert part in title, (part, title)



def test_plot_title_reads_well_without_a_schedule():
    args = parse_args(["--model", "mlp"])
    args.lr, args.momentum, args.schedule = 0.1, 0.0, "none"
    title = _settings(args)
    assert "sgd lr 0.1, constant lr," in title and "none" not in title, title


def test_help_explains_every_option_with_its_default():
    parser = make_parser()
    assert parser.prog == "python -m minitorch.examples.mnist"
    assert parser.format_usage().startswith("usage: python -m minitorch.examples.mnist ")
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help and "default" in action.help, action.option_strings
        assert "--help of" not in action.help  # point at what a command-line user can read
    with pytest.raises(SystemExit):
        parser.parse_args(["--help"])

class _Terminal(io.StringIO):
    """A stderr that says it is a terminal, so the command shows its progress bar."""

    def isatty(self) -> bool:
        return True


@needs_mnist
def test_progress_bar_does_not_change_the_numbers(tmp_path, monkeypatch):
    pytest.importorskip("tqdm", reason="tqdm is not installed (pip install 'minitorch[examples]')")
    argv = ["--epochs", "2", "--limit", "640", "--batch-size", "32", "--out", str(tmp_path)]
    quiet = train(parse_args(argv + ["--quiet"]))
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    shown = train(parse_args(argv))
    assert "epoch 1/2" in term.getvalue()  # the bar was drawn
    assert shown["loss"] == quiet["loss"] and shown["test_acc"] == quiet["test_acc"]
