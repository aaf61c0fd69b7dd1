"""SyncBatchNorm on 2+ ranks, checked against one process's BatchNorm on the whole batch.
Run by tests/distributed/test_dist_sync_bn.py; prints "rank R ok" at the end."""
import numpy as np

import minitorch
import minitorch.distributed as dist
from minitorch import nn

dist.init_process_group("mpi")
r, w = dist.get_rank(), dist.get_world_size()
rng = np.random.default_rng(0)  # the same data on every rank
shares = [3 + k for k in range(w)]  # unequal shares: rank k has 3 + k samples
total = sum(shares)
start = sum(shares[:r])
X = rng.standard_normal((total, 4, 5, 3)) * 2 + 1
G = rng.standard_normal((total, 4, 5, 3))


def close(a, b, what, tol=1e-10):
    a, b = np.asarray(a), np.asarray(b)
    err = float(np.abs(a - b).max()) if a.size else 0.0
    assert err <= tol * (1 + float(np.abs(b).max(initial=0))), f"rank {r}: {what} differs by {err}"


for momentum in (0.1, None):
    minitorch.manual_seed(0)
    ref = nn.BatchNorm2d(4, momentum=momentum).double()
    with minitorch.no_grad():
        ref.weight.copy_(minitorch.tensor(rng.uniform(0.5, 2, 4)))
        ref.bias.copy_(minitorch.tensor(rng.uniform(-1, 1, 4)))
    model = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.BatchNorm2d(4, momentum=momentum).double()))
    sync = model[0]
    assert isinstance(sync, nn.SyncBatchNorm)
    sync.load_state_dict(ref.state_dict())
    for step in range(2):
        x_all = minitorch.tensor(X + step, requires_grad=True)
        y_all = ref(x_all)
        (y_all * minitorch.tensor(G)).sum().backward()
        x = minitorch.tensor(X[start:start + shares[r]] + step, requires_grad=True)
        sync.zero_grad()
        y = model(x)
        (y * minitorch.tensor(G[start:start + shares[r]])).sum().backward()
        close(y.detach().numpy(), y_all.detach().numpy()[start:start + shares[r]], "output")
        close(x.grad.numpy(), x_all.grad.numpy()[start:start + shares[r]], "input gradient")
        # weight / bias gradients are each rank's own: their sum over ranks is the whole batch's
        for name in ("weight", "bias"):
            mine = getattr(sync, name).grad.detach().clone()
            dist.all_reduce(mine)
            close(mine.numpy(), getattr(ref, name).grad.numpy(), name + " gradient")
        ref.zero_grad()
        for name in ("running_mean", "running_var", "num_batches_tracked"):
            close(getattr(sync, name).numpy(), getattr(ref, name).numpy(), name)
    # eval(): the running statistics, no communication
    sync.eval()
    ref.eval()
    close(sync(minitorch.tensor(X[:2])).detach().numpy(), ref(minitorch.tensor(X[:2])).detach().numpy(), "eval")

# float32 as well (statistics gathered in float32)
sync32 = nn.SyncBatchNorm(4)
ref32 = nn.BatchNorm2d(4)
x32 = minitorch.tensor(X, dtype=minitorch.float32)
close(sync32(x32[start:start + shares[r]]).detach().numpy(), ref32(x32).detach().numpy()[start:start + shares[r]],
      "float32 output", tol=1e-5)
# float16 input with float32 parameters: a float16 result (as one rank and PyTorch give)
y16 = nn.SyncBatchNorm(4)(x32[start:start + shares[r]].half())
assert y16.dtype == minitorch.float16, f"rank {r}: float16 input gave {y16.dtype}"
close(y16.float().detach().numpy(), ref32(x32).detach().numpy()[start:start + shares[r]], "float16 output", tol=2e-3)
print(f"rank {r} ok", flush=True)
