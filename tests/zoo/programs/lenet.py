"""LeNet-5 as d2l.ai writes it: Conv2d(padding=2), Sigmoid, AvgPool2d, nn.Flatten, a
Sequential of Linear/Sigmoid layers; Xavier-uniform init applied with ``net.apply``
(then overwritten by the NumPy draws so both libraries start alike) and plain SGD; the
accuracy counted with ``argmax`` and ``.type(y.dtype)``."""
from .common import data, init_weights, labels


def run(torch, device="cpu", steps=3):
    nn = torch.nn
    net = nn.Sequential(
        nn.Conv2d(1, 6, kernel_size=5, padding=2), nn.Sigmoid(),
        nn.AvgPool2d(kernel_size=2, stride=2),
        nn.Conv2d(6, 16, kernel_size=5), nn.Sigmoid(),
        nn.AvgPool2d(kernel_size=2, stride=2),
        nn.Flatten(),
        nn.Linear(16 * 5 * 5, 120), nn.Sigmoid(),
        nn.Linear(120, 84), nn.Sigmoid(),
        nn.Linear(84, 10))

    def init_weights_xavier(m):
        if type(m) == nn.Linear or type(m) == nn.Conv2d:
            nn.init.xavier_uniform_(m.weight)

    net.apply(init_weights_xavier)
    net = init_weights(torch, net).to(device)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.9)
    loss = nn.CrossEntropyLoss()
    X = torch.tensor(data((8, 1, 28, 28), 23, 0.0, 1.0), device=device)
    y = torch.tensor(labels(8, 10, 24), device=device)
    losses = []
    net.train()
    for _ in range(steps):
        optimizer.zero_grad()
        y_hat = net(X)
        l = loss(y_hat, y)
        l.backward()
        optimizer.step()
        with torch.no_grad():
            correct = (y_hat.argmax(axis=1).type(y.dtype) == y).float().sum()
        losses += [l.item(), correct.item()]
    return losses
