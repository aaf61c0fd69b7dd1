"""An MLP GAN with the normalizations of the GAN literature: a discriminator whose
Linear layers go through ``nn.utils.parametrizations.spectral_norm`` (Miyato et al.;
one power iteration per training forward, ``u`` and ``v`` kept as buffers), a
generator with ``nn.utils.weight_norm`` (Salimans & Kingma), the hinge loss, Adam with
betas=(0.0, 0.9). Returns loss_D, loss_G per step; ends with the discriminator's
state_dict key names checked (PyTorch's)."""
import numpy as np

from .common import data, init_weights


def run(torch, device="cpu", steps=3):
    nn = torch.nn
    F = torch.nn.functional
    SN = nn.utils.parametrizations.spectral_norm
    WN = nn.utils.weight_norm

    netD = nn.Sequential(SN(nn.Linear(6, 16)), nn.LeakyReLU(0.1), SN(nn.Linear(16, 1)))
    netG = nn.Sequential(WN(nn.Linear(3, 16)), nn.ReLU(), WN(nn.Linear(16, 6)), nn.Tanh())
    netD = init_weights(torch, netD, seed=1).to(device)
    netG = init_weights(torch, netG, seed=2).to(device)
    optD = torch.optim.Adam(netD.parameters(), lr=1e-3, betas=(0.0, 0.9))
    optG = torch.optim.Adam(netG.parameters(), lr=1e-3, betas=(0.0, 0.9))
    real = torch.tensor(data((8, 6), 20), device=device)
    rng = np.random.default_rng(21)
    losses = []
    for _ in range(steps):
        z = torch.tensor(rng.standard_normal((8, 3)).astype(np.float32), device=device)
        fake = netG(z)
        optD.zero_grad()
        loss_D = F.relu(1.0 - netD(real)).mean() + F.relu(1.0 + netD(fake.detach())).mean()
        loss_D.backward()
        optD.step()
        optG.zero_grad()
        loss_G = -netD(fake).mean()
        loss_G.backward()
        optG.step()
        losses += [loss_D.item(), loss_G.item()]
    keys = list(netD.state_dict())
    assert keys == ["0.bias", "0.parametrizations.weight.original", "0.parametrizations.weight.0._u",
                    "0.parametrizations.weight.0._v", "2.bias", "2.parametrizations.weight.original",
                    "2.parametrizations.weight.0._u", "2.parametrizations.weight.0._v"], keys
    assert list(netG.state_dict()) == ["0.bias", "0.weight_g", "0.weight_v", "2.bias", "2.weight_g", "2.weight_v"]
    return losses
