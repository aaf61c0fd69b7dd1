"""A small U-Net (Ronneberger et al.; the milesial/Pytorch-UNet layout): double 3x3
conv blocks with BatchNorm, MaxPool2d on the way down, ConvTranspose2d up (or, with
``bilinear=True``, ``nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)``:
unet_bilinear.py), ``torch.cat`` of the skip connection, a 1x1 head; per-pixel
CrossEntropyLoss on (N, C, H, W) logits and (N, H, W) labels; RMSprop as in that
repository."""
from .common import data, init_weights, labels


def run(torch, device="cpu", steps=3, bilinear=False):
    nn = torch.nn

    class DoubleConv(nn.Module):
        def __init__(self, in_channels, out_channels, mid_channels=None):
            super().__init__()
            if not mid_channels:
                mid_channels = out_channels
            self.double_conv = nn.Sequential(
                nn.Conv2d(in_channels, mid_channels, kernel_size=3, padding=1, bias=False),
                nn.BatchNorm2d(mid_channels),
                nn.ReLU(inplace=True),
                nn.Conv2d(mid_channels, out_channels, kernel_size=3, padding=1, bias=False),
                nn.BatchNorm2d(out_channels),
                nn.ReLU(inplace=True),
            )

        def forward(self, x):
            return self.double_conv(x)

    class Up(nn.Module):
        def __init__(self, in_channels, out_channels, bilinear):
            super().__init__()
            if bilinear:
                self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
                self.conv = DoubleConv(in_channels + in_channels // 2, out_channels, in_channels // 2)
            else:
                self.up = nn.ConvTranspose2d(in_channels, in_channels // 2, kernel_size=2, stride=2)
                self.conv = DoubleConv(in_channels, out_channels)

        def forward(self, x1, x2):
            x1 = self.up(x1)
            x = torch.cat([x2, x1], dim=1)
            return self.conv(x)

    class UNet(nn.Module):
        def __init__(self, n_channels=3, n_classes=4):
            super().__init__()
            self.inc = DoubleConv(n_channels, 8)
            self.down1 = nn.Sequential(nn.MaxPool2d(2), DoubleConv(8, 16))
            self.down2 = nn.Sequential(nn.MaxPool2d(2), DoubleConv(16, 32))
            self.up1 = Up(32, 16, bilinear)
            self.up2 = Up(16, 8, bilinear)
            self.outc = nn.Conv2d(8, n_classes, kernel_size=1)

        def forward(self, x):
            x1 = self.inc(x)
            x2 = self.down1(x1)
            x3 = self.down2(x2)
            x = self.up1(x3, x2)
            x = self.up2(x, x1)
            return self.outc(x)

    model = init_weights(torch, UNet()).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3, weight_decay=1e-8, momentum=0.9)
    images = torch.tensor(data((2, 3, 8, 8), 14), device=device)
    masks = torch.tensor(labels((2, 8, 8), 4, 15), device=device)
    losses = []
    model.train()
    for _ in range(steps):
        masks_pred = model(images)
        loss = criterion(masks_pred, masks)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
