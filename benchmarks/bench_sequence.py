"""Sequence models on the CPU beside PyTorch, in one run: ``python benchmarks/bench_sequence.py``.

Training steps at batch 64 (forward, backward, Adam step) of the MNIST example models of
the sequences issue (issue 17) and their pieces: the row LSTM (28 steps of 28 pixels,
hidden 128), the small ViT (16 patches, 4 pre-norm encoder layers of width 64), one LSTM
cell step, layer norm, and masked attention. The same weights on both sides; best of several
repeats; ``--threads 1`` (default) sets minitorch and PyTorch to one thread. Ratio:
minitorch / PyTorch (below 1: minitorch is faster). PyTorch is optional (``-`` where absent).

Target (issue 17): the LSTM and the transformer steps no slower than PyTorch.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import minitorch  # noqa: E402
from minitorch.examples.mnist import RowLSTM, ViT  # noqa: E402
from bench_cuda import train_step  # noqa: E402
from timing import best_of  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


def fmt(t):
    return f"{t * 1e3:9.3f}" if t is not None else f"{'-':>9}"


def row(name, t_mt, t_torch=None):
    ratio = f"{t_mt / t_torch:6.2f}x" if t_torch else f"{'-':>7}"
    print(f"{name:<44}{fmt(t_mt)}{fmt(t_torch)} {ratio}")


def torch_twin(model):
    """The PyTorch module with the same structure and weights (state_dict keys are PyTorch's)."""
    if isinstance(model, RowLSTM):
        class T(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = torch.nn.LSTM(28, model.lstm.hidden_size, batch_first=True)
                self.fc = torch.nn.Linear(model.lstm.hidden_size, 10)

            def forward(self, x):
                out, (h, c) = self.lstm(x.reshape(x.shape[0], 28, 28))
                return self.fc(h[-1])
    else:
        class T(torch.nn.Module):
            def __init__(self):
                super().__init__()
                dim = model.embed.out_features
                self.patch = model.patch
                self.embed = torch.nn.Linear(model.patch ** 2, dim)
                self.cls_token = torch.nn.Parameter(torch.zeros(1, 1, dim))
                self.pos_embed = torch.nn.Parameter(torch.zeros(1, model.pos_embed.shape[1], dim))
                layer = torch.nn.TransformerEncoderLayer(dim, 4, 2 * dim, dropout=0.0, activation="gelu",
                                                         batch_first=True, norm_first=True)
                self.encoder = torch.nn.TransformerEncoder(layer, len(model.encoder.layers),
                                                           enable_nested_tensor=False)
                self.norm = torch.nn.LayerNorm(dim)
                self.head = torch.nn.Linear(dim, 10)

            def forward(self, x):
                p, g = self.patch, 28 // self.patch
                t = x.reshape(x.shape[0], g, p, g, p).permute(0, 1, 3, 2, 4).reshape(x.shape[0], g * g, p * p)
                t = self.embed(t)
                h = torch.cat([self.cls_token.expand(x.shape[0], 1, -1), t], 1) + self.pos_embed
                return self.head(self.norm(self.encoder(h)[:, 0]))
    twin = T()
    state = {k: torch.tensor(np.asarray(v.detach().numpy())) for k, v in model.state_dict().items()}
    twin.load_state_dict(state)
    return twin


def step_fn(lib, model, x, y):
    return train_step(lib, model, lib.optim.Adam(model.parameters(), lr=1e-3), x, y)


def model_rows(number: int) -> None:
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((64, 1, 28, 28)).astype(np.float32)
    y_np = rng.integers(0, 10, 64)
    for name, make in (("row LSTM step (hidden 128, 28 steps)", lambda: RowLSTM(128)), ("ViT step (4 layers, d 64)", ViT)):
        minitorch.manual_seed(0)
        model = make()
        t_mt = best_of(step_fn(minitorch, model, minitorch.tensor(x_np), minitorch.tensor(y_np)), number=number)
        t_torch = None
        if torch is not None:
            twin = torch_twin(model)
            t_torch = best_of(step_fn(torch, twin, torch.from_numpy(x_np), torch.from_numpy(y_np)), number=number)
        row(name, t_mt, t_torch)


def piece_rows(number: int) -> None:
    rng = np.random.default_rng(1)
    g_np = rng.standard_normal((64, 512)).astype(np.float32)
    c_np = rng.standard_normal((64, 128)).astype(np.float32)
    x_np = rng.standard_normal((64, 17, 64)).astype(np.float32)
    q_np = rng.standard_normal((64, 4, 17, 16)).astype(np.float32)

    def both(name, f_mt, f_torch, inputs):
        mt_in = [minitorch.tensor(a, requires_grad=True) for a in inputs]
        t_mt = best_of(lambda: f_mt(*mt_in).sum().backward(), number=number)
        t_torch = None
        if torch is not None:
            t_in = [torch.tensor(a, requires_grad=True) for a in inputs]
            t_torch = best_of(lambda: f_torch(*t_in).sum().backward(), number=number)
        row(name, t_mt, t_torch)

    def lstm_gates(lib):
        def f(g, c):
            i, fg, gg, o = g.chunk(4, 1)
            c2 = fg.sigmoid() * c + i.sigmoid() * gg.tanh()
            return o.sigmoid() * c2.tanh() + c2  # h + c
        return f

    def fused_cell(g, c):  # minitorch's one-op cell (what nn.LSTM runs), beside PyTorch's op chain
        h2, c2 = minitorch._C._lstm_cell(g, c)
        return h2 + c2

    both("LSTM cell gates fwd+bwd (64 x 4*128)", fused_cell, lstm_gates(torch), [g_np, c_np])
    ln_mt = minitorch.nn.LayerNorm(64)
    ln_t = torch.nn.LayerNorm(64) if torch else None
    both("layer_norm fwd+bwd (64 x 17 x 64)", lambda x: ln_mt(x), lambda x: ln_t(x), [x_np])
    mask_np = np.tril(np.ones((17, 17), bool))

    def attn(lib):
        mask = lib.tensor(mask_np)

        def f(q):
            s = (q @ q.transpose(-2, -1)) * 0.25
            return s.masked_fill(~mask, float("-inf")).softmax(-1) @ q
        return f
    both("masked attention fwd+bwd (64 x 4 heads x 17)", attn(minitorch), attn(torch) if torch else None, [q_np])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--number", type=int, default=5)
    args = p.parse_args()
    minitorch.set_num_threads(args.threads)
    if torch is not None:
        torch.set_num_threads(args.threads)
    print(f"minitorch {minitorch.__version__}, PyTorch {torch.__version__ if torch else '-'}; "
          f"{args.threads} thread(s); ms per call")
    print(f"{'workload':<44}{'minitorch':>9}{'PyTorch':>9}  ratio")
    model_rows(args.number)
    piece_rows(args.number * 10)


if __name__ == "__main__":
    main()
