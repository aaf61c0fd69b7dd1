"""The everyday training script of the PyTorch tutorials: a TensorDataset and a
DataLoader (batches in order), an MLP with BatchNorm1d and Dropout, Adam with AMSGrad
and a StepLR schedule, a checkpoint (model, optimizer and scheduler state_dicts) loaded
with ``load_state_dict`` into a fresh model, optimizer and scheduler mid-training, and an
evaluation loop under ``model.eval()`` and ``torch.no_grad()`` with accuracy. (The
checkpoint stays in memory: ``minitorch.save`` writes safetensors files, which hold
tensors only, not an optimizer's state_dict.)"""
from .common import data, init_weights, labels


def run(torch, device="cpu", steps=3):
    nn = torch.nn
    from_pt = torch.utils.data

    def make_model():
        # (no bias before BatchNorm: its gradient is zero up to rounding, which Adam would
        # normalize into steps of size lr in a direction set by rounding noise)
        return nn.Sequential(nn.Linear(10, 32, bias=False), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.0),
                             nn.Linear(32, 3)).to(device)

    X = torch.tensor(data((24, 10), 28))
    y = torch.tensor(labels(24, 3, 29))
    loader = from_pt.DataLoader(from_pt.TensorDataset(X, y), batch_size=8, shuffle=False)
    model = init_weights(torch, make_model())
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, amsgrad=True)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for epoch in range(steps):
        model.train()
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            pred = model(xb)
            loss = loss_fn(pred, yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        scheduler.step()
        if epoch == 0:  # checkpoint, then carry on from the reloaded copy
            checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                          "scheduler": scheduler.state_dict()}
            model = make_model()
            model.load_state_dict(checkpoint["model"])
            optimizer = torch.optim.Adam(model.parameters(), lr=0.01, amsgrad=True)
            optimizer.load_state_dict(checkpoint["optimizer"])
            scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
            scheduler.load_state_dict(checkpoint["scheduler"])
    model.eval()
    test_loss, correct = 0.0, 0
    with torch.no_grad():
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            pred = model(xb)
            test_loss += loss_fn(pred, yb).item()
            correct += (pred.argmax(1) == yb).type(torch.float).sum().item()
    return losses + [test_loss / len(loader), correct / len(loader.dataset), optimizer.param_groups[0]["lr"]]
