"""An AlexNet-shaped CNN (torchvision's layout, shrunk): conv/ReLU/max-pool features,
AdaptiveAvgPool2d, a Dropout-Linear-ReLU classifier; trained in eval mode, so dropout
is off and the run is deterministic; SGD with momentum."""
from .common import data, init_weights, labels


def run(torch, device="cpu", steps=3):
    nn = torch.nn

    class AlexNet(nn.Module):
        def __init__(self, num_classes=10, dropout=0.5):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(3, 8, kernel_size=5, stride=2, padding=2),
                nn.ReLU(inplace=True),
                nn.MaxPool2d(kernel_size=3, stride=2),
                nn.Conv2d(8, 12, kernel_size=3, padding=1),
                nn.ReLU(inplace=True),
                nn.Conv2d(12, 12, kernel_size=3, padding=1),
                nn.ReLU(inplace=True),
                nn.MaxPool2d(kernel_size=3, stride=2),
            )
            self.avgpool = nn.AdaptiveAvgPool2d((2, 2))
            self.classifier = nn.Sequential(
                nn.Dropout(p=dropout),
                nn.Linear(12 * 2 * 2, 32),
                nn.ReLU(inplace=True),
                nn.Dropout(p=dropout),
                nn.Linear(32, num_classes),
            )

        def forward(self, x):
            x = self.features(x)
            x = self.avgpool(x)
            x = torch.flatten(x, 1)
            return self.classifier(x)

    model = init_weights(torch, AlexNet()).to(device)
    model.eval()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    images = torch.tensor(data((4, 3, 28, 28), 8), device=device)
    targets = torch.tensor(labels(4, 10, 9), device=device)
    losses = []
    for _ in range(steps):
        output = model(images)
        loss = criterion(output, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
