"""Mixup training (Zhang et al. 2018) of an MLP classifier: inputs and one-hot labels
mixed with a Beta-drawn lambda, so the loss is a cross-entropy against class
*probabilities*; a class-weighted, label-smoothed loss on the plain batch too; AdamW
(decoupled weight decay)."""
import numpy as np

from .common import data, init_weights, labels


def run(torch, device="cpu", steps=3):
    nn = torch.nn
    F = torch.nn.functional

    model = init_weights(torch, nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.Linear(16, 4))).to(device)
    class_weight = torch.tensor(np.array([1.0, 2.0, 0.5, 1.5], np.float32), device=device)
    smooth_ce = nn.CrossEntropyLoss(weight=class_weight, label_smoothing=0.1)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.05)
    x = torch.tensor(data((8, 6), 16), device=device)
    y = torch.tensor(labels(8, 4, 17), device=device)
    rng = np.random.default_rng(18)
    losses = []
    for _ in range(steps):
        lam = float(rng.beta(0.4, 0.4))
        perm = torch.tensor(rng.permutation(8), device=device)
        x_mix = lam * x + (1 - lam) * x[perm]
        y_onehot = F.one_hot(y, 4).float()
        y_mix = lam * y_onehot + (1 - lam) * y_onehot[perm]
        opt.zero_grad()
        loss = F.cross_entropy(model(x_mix), y_mix) + smooth_ce(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses
