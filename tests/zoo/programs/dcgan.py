"""DCGAN (Radford et al.; PyTorch's dcgan example, shrunk to 16x16 images): a generator
of ConvTranspose2d/BatchNorm2d/ReLU ending in Tanh, a discriminator of strided
Conv2d/BatchNorm2d/LeakyReLU ending in Sigmoid, BCELoss, Adam(betas=(0.5, 0.999)), and
the alternating updates: D on real and on detached fake images, then G through D.
Returns errD, errG per step. The noise comes from NumPy."""
import numpy as np

from .common import data, init_weights


def run(torch, device="cpu", steps=3):
    nn = torch.nn
    nz, ngf, ndf, nc = 8, 8, 8, 3

    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(
                nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),  # 1 -> 4
                nn.BatchNorm2d(ngf * 2),
                nn.ReLU(True),
                nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),  # 4 -> 8
                nn.BatchNorm2d(ngf),
                nn.ReLU(True),
                nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),  # 8 -> 16
                nn.Tanh(),
            )

        def forward(self, input):
            return self.main(input)

    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(
                nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),  # 16 -> 8
                nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),  # 8 -> 4
                nn.BatchNorm2d(ndf * 2),
                nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),  # 4 -> 1
                nn.Sigmoid(),
            )

        def forward(self, input):
            return self.main(input).view(-1, 1).squeeze(1)

    netG = init_weights(torch, Generator(), seed=1).to(device)
    netD = init_weights(torch, Discriminator(), seed=2).to(device)
    criterion = nn.BCELoss()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    real = torch.tensor(data((4, nc, 16, 16), 10), device=device)
    rng = np.random.default_rng(11)
    real_label, fake_label = 1.0, 0.0
    losses = []
    for _ in range(steps):
        # (1) Update D: maximize log(D(x)) + log(1 - D(G(z)))
        netD.zero_grad()
        label = torch.full((4,), real_label, dtype=real.dtype, device=device)
        errD_real = criterion(netD(real), label)
        errD_real.backward()
        noise = torch.tensor(rng.standard_normal((4, nz, 1, 1)).astype(np.float32), device=device)
        fake = netG(noise)
        label.fill_(fake_label)
        errD_fake = criterion(netD(fake.detach()), label)
        errD_fake.backward()
        errD = errD_real + errD_fake
        optimizerD.step()
        # (2) Update G: maximize log(D(G(z)))
        netG.zero_grad()
        label.fill_(real_label)
        errG = criterion(netD(fake), label)
        errG.backward()
        optimizerG.step()
        losses += [errD.item(), errG.item()]
    return losses
