"""DistributedDataParallel on 2+ ranks, checked against one process on the whole batch.
Run by tests/distributed/test_dist_ddp.py; prints "rank R ok" at the end."""
import sys

import numpy as np

import minitorch
import minitorch.distributed as dist
from minitorch import nn
from minitorch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
r, w = dist.get_rank(), dist.get_world_size()
B = 6 * w  # batch size: every rank takes 6 rows
rng = np.random.default_rng(0)  # the same data on every rank
X = minitorch.tensor(rng.standard_normal((5, B, 7)), dtype=minitorch.float32)
Y = minitorch.tensor(rng.integers(0, 3, (5, B)))
loss_fn = nn.CrossEntropyLoss()  # mean over the batch: the mean of the ranks' means is the batch mean
mine = slice(6 * r, 6 * (r + 1))


def mlp(seed):
    minitorch.manual_seed(seed)
    return nn.Sequential(nn.Linear(7, 16), nn.Tanh(), nn.Linear(16, 12), nn.ReLU(), nn.Linear(12, 3))


def max_diff(a, b):
    return max(float((x - y).abs().max()) for x, y in zip(a, b))


def same_on_every_rank(tensors):
    for t in tensors:
        lo, hi = t.detach().clone(), t.detach().clone()
        dist.all_reduce(lo, op=dist.ReduceOp.MIN)
        dist.all_reduce(hi, op=dist.ReduceOp.MAX)
        assert float((hi - lo).abs().max()) == 0.0


# 1. Training: DDP on this rank's rows == one process on whole batches (plain SGD, then momentum).
for cap_mb, momentum in ((25, 0.0), (0.0005, 0.9)):  # one bucket; then buckets of ~1 layer
    ref = mlp(1)  # what rank 0 starts from
    ref_opt = minitorch.optim.SGD(ref.parameters(), lr=0.2, momentum=momentum)
    for s in range(5):
        ref_opt.zero_grad()
        loss_fn(ref(X[s]), Y[s]).backward()
        ref_opt.step()

    model = DDP(mlp(1 + r), bucket_cap_mb=cap_mb)  # different inits: the constructor copies rank 0's
    assert max_diff(model.module.parameters(), mlp(1).parameters()) == 0.0
    if cap_mb < 1:
        assert len(model._buckets) >= 3, [len(b.indices) for b in model._buckets]
    opt = minitorch.optim.SGD(model.parameters(), lr=0.2, momentum=momentum)
    events, real_all_reduce = [], dist.all_reduce

    def logged_all_reduce(*args, **kwargs):
        events.append("all_reduce")
        return real_all_reduce(*args, **kwargs)

    dist.all_reduce = logged_all_reduce
    watch = model.module[2].weight.register_post_accumulate_grad_hook(lambda p: events.append("middle grad"))
    for s in range(5):
        opt.zero_grad()
        del events[:]
        loss_fn(model(X[s][mine]), Y[s][mine]).backward()
        opt.step()
        if cap_mb < 1:  # buckets travel while backward still computes the first layers' gradients
            assert events[0] == "all_reduce" and events[-1] == "all_reduce" and "middle grad" in events, events
    dist.all_reduce = real_all_reduce
    watch.remove()
    err = max_diff(model.module.parameters(), ref.parameters())
    assert err < 1e-5, (cap_mb, momentum, err)
    same_on_every_rank(model.parameters())

# 2. The wrapper: forward passes through, state_dict keys carry "module.", PyTorch's attributes.
assert list(model.state_dict())[:2] == ["module.0.weight", "module.0.bias"]
assert model.module(X[0]).tolist() == model(X[0]).tolist()
assert isinstance(model.module, nn.Sequential) and model.find_unused_parameters is False

# 3. no_sync: two local backwards (one inside no_sync, one outside) == the ranks' sum averaged.
model = DDP(mlp(2))
ref = mlp(2)
half = slice(6 * r, 6 * r + 3), slice(6 * r + 3, 6 * (r + 1))
with model.no_sync():
    loss_fn(model(X[0][half[0]]), Y[0][half[0]]).backward()
local = [p.grad.clone() for p in model.parameters()]
ref_local = mlp(2)
loss_fn(ref_local(X[0][half[0]]), Y[0][half[0]]).backward()
assert max_diff(local, [p.grad for p in ref_local.parameters()]) < 1e-6  # inside no_sync: this rank's own
loss_fn(model(X[0][half[1]]), Y[0][half[1]]).backward()  # outside: synchronizes the accumulated sum
for q in range(w):
    for part in (slice(6 * q, 6 * q + 3), slice(6 * q + 3, 6 * (q + 1))):
        (loss_fn(ref(X[0][part]), Y[0][part]) / w).backward()
assert max_diff([p.grad for p in model.parameters()], [p.grad for p in ref.parameters()]) < 1e-6
same_on_every_rank([p.grad for p in model.parameters()])


# 4. A parameter the loss does not use.
class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.used = nn.Linear(7, 3)
        self.rank0_only = nn.Linear(3, 3)  # used on rank 0 only
        self.never = nn.Linear(7, 3)       # registered last: the first bucket

    def forward(self, x):
        y = self.used(x)
        return self.rank0_only(y) if dist.get_rank() == 0 else y


minitorch.manual_seed(3)
model = DDP(Branchy(), find_unused_parameters=True, bucket_cap_mb=0.0001)
loss_fn(model(X[0][mine]), Y[0][mine]).backward()
assert model.module.never.weight.grad is None  # unused everywhere: stays None, as in PyTorch
g = model.module.rank0_only.weight.grad
assert g is not None  # used on rank 0: every rank gets rank 0's gradient / world size
same_on_every_rank([g, model.module.used.weight.grad])

minitorch.manual_seed(3)
model = DDP(Branchy())  # find_unused_parameters=False: the next forward says what went wrong
loss_fn(model(X[0][mine]), Y[0][mine]).backward()
try:
    model(X[0][mine])
    raise AssertionError("expected the unfinished-reduction error")
except RuntimeError as e:
    assert "Expected to have finished reduction in the prior iteration" in str(e), str(e)
    assert "find_unused_parameters=True" in str(e) and "never.weight" in str(e), str(e)

# 5. Buffers: rank 0's BatchNorm statistics reach every rank.
minitorch.manual_seed(4)
bn = nn.Sequential(nn.Linear(7, 4), nn.BatchNorm1d(4))
with minitorch.no_grad():
    bn[1].running_mean.fill_(float(r))
model = DDP(bn)
assert bn[1].running_mean.tolist() == [0.0] * 4

# 6. A "cuda" model in the emulated-CUDA build: the buckets go through host copies.
if minitorch.cuda.is_available() and minitorch.cuda.is_emulated():
    ref = mlp(1)
    ref_opt = minitorch.optim.SGD(ref.parameters(), lr=0.2)
    model = DDP(mlp(1 + r).to("cuda"), device_ids=[0], bucket_cap_mb=0.0005)
    opt = minitorch.optim.SGD(model.parameters(), lr=0.2)
    for s in range(2):
        ref_opt.zero_grad()
        loss_fn(ref(X[s]), Y[s]).backward()
        ref_opt.step()
        opt.zero_grad()
        loss_fn(model(X[s][mine].cuda()), Y[s][mine].cuda()).backward()
        opt.step()
    assert model.module[0].weight.device.type == "cuda"
    assert max_diff([p.cpu() for p in model.module.parameters()], ref.parameters()) < 1e-5

dist.destroy_process_group()
sys.stdout.write(f"rank {r} ok\n")
