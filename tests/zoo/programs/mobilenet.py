"""MobileNetV2's inverted residual blocks (torchvision's layout): 1x1 expansion,
depthwise 3x3 convolution (``groups`` = channels), ReLU6, a linear 1x1 projection, the
residual connection when shapes allow; classifier with Dropout; SGD with Nesterov
momentum; one eval-mode loss at the end."""
from .common import data, init_weights, labels


def run(torch, device="cpu", steps=3):
    nn = torch.nn

    class ConvBNReLU(nn.Sequential):
        def __init__(self, in_planes, out_planes, kernel_size=3, stride=1, groups=1):
            padding = (kernel_size - 1) // 2
            super().__init__(
                nn.Conv2d(in_planes, out_planes, kernel_size, stride, padding, groups=groups, bias=False),
                nn.BatchNorm2d(out_planes),
                nn.ReLU6(inplace=True),
            )

    class InvertedResidual(nn.Module):
        def __init__(self, inp, oup, stride, expand_ratio):
            super().__init__()
            hidden_dim = int(round(inp * expand_ratio))
            self.use_res_connect = stride == 1 and inp == oup
            layers = []
            if expand_ratio != 1:
                layers.append(ConvBNReLU(inp, hidden_dim, kernel_size=1))
            layers.extend([
                ConvBNReLU(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim),  # depthwise
                nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),  # pointwise-linear
                nn.BatchNorm2d(oup),
            ])
            self.conv = nn.Sequential(*layers)

        def forward(self, x):
            if self.use_res_connect:
                return x + self.conv(x)
            return self.conv(x)

    class MobileNet(nn.Module):
        def __init__(self, num_classes=10):
            super().__init__()
            self.features = nn.Sequential(
                ConvBNReLU(3, 8, stride=2),
                InvertedResidual(8, 8, 1, expand_ratio=1),
                InvertedResidual(8, 12, 2, expand_ratio=4),
                InvertedResidual(12, 12, 1, expand_ratio=4),
            )
            self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(12, num_classes))

        def forward(self, x):
            x = self.features(x)
            x = nn.functional.adaptive_avg_pool2d(x, (1, 1))
            x = torch.flatten(x, 1)
            return self.classifier(x)

    model = init_weights(torch, MobileNet()).to(device)
    model.classifier[0].p = 0.0  # dropout off: the same numbers in both libraries
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    images = torch.tensor(data((4, 3, 16, 16), 12), device=device)
    targets = torch.tensor(labels(4, 10, 13), device=device)
    losses = []
    model.train()
    for _ in range(steps):
        optimizer.zero_grad()
        loss = criterion(model(images), targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        losses.append(criterion(model(images), targets).item())
    return losses
