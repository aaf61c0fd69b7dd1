"""Not a training program: PyTorch's class losses on one float64 batch, every combination
of reduction, class weights and label smoothing, with class-index targets (ignored
labels included), class-probability targets, (N, C, H, W) inputs and unbatched (C,)
inputs; NLL with weights; BCE with weights and BCE-with-logits with pos_weight.
``run`` returns every value, flattened, in a fixed order."""
import numpy as np


def run(torch, device="cpu", steps=3):
    F = torch.nn.functional
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 4))
    x4 = rng.standard_normal((2, 4, 3, 2))
    t = np.array([0, 3, -100, 2, 1, 3])
    t4 = rng.integers(0, 4, (2, 3, 2))
    t4[0, 0, 0] = -100
    w = np.array([0.5, 2.0, 1.0, 3.0])
    p = rng.random((6, 4))
    p /= p.sum(1, keepdims=True)
    p4 = rng.random((2, 4, 3, 2))

    def T(a):
        return torch.tensor(a, device=device)

    out = []
    for red in ["none", "mean", "sum"]:
        for ls in [0.0, 0.2]:
            for wt in [None, T(w)]:
                out += [F.cross_entropy(T(x), T(t), weight=wt, reduction=red, label_smoothing=ls),
                        F.cross_entropy(T(x4), T(t4), weight=wt, reduction=red, label_smoothing=ls),
                        F.cross_entropy(T(x), T(p), weight=wt, reduction=red, label_smoothing=ls),
                        F.cross_entropy(T(x4), T(p4), weight=wt, reduction=red, label_smoothing=ls),
                        F.cross_entropy(T(x[0]), T(np.array(2)), weight=wt, reduction=red, label_smoothing=ls)]
        out.append(F.nll_loss(T(x), T(t), weight=T(w), reduction=red))
        out.append(torch.nn.CrossEntropyLoss(weight=T(w), ignore_index=3, reduction=red)(T(x4), T(np.abs(t4) % 4)))
        out.append(F.binary_cross_entropy(T(p), T(p[::-1].copy()), weight=T(w), reduction=red))
        out.append(F.binary_cross_entropy_with_logits(T(x), T(p), weight=T(w), reduction=red,
                                                      pos_weight=T(w[::-1].copy())))
    return [float(v) for o in out for v in np.asarray(o.detach().cpu().numpy()).reshape(-1)]
