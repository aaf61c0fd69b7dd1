"""The VAE of PyTorch's examples (Kingma & Welling): an MLP encoder to (mu, logvar), the
reparameterization ``z = mu + eps * exp(logvar / 2)``, a sigmoid decoder, BCE (summed)
plus the KL divergence; Adam. The noise ``eps`` comes from NumPy (``randn_like`` would
differ between libraries)."""
import numpy as np

from .common import data, init_weights


def run(torch, device="cpu", steps=3):
    nn = torch.nn
    F = torch.nn.functional

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(16, 12)
            self.fc21 = nn.Linear(12, 2)
            self.fc22 = nn.Linear(12, 2)
            self.fc3 = nn.Linear(2, 12)
            self.fc4 = nn.Linear(12, 16)

        def encode(self, x):
            h1 = F.relu(self.fc1(x))
            return self.fc21(h1), self.fc22(h1)

        def reparameterize(self, mu, logvar, eps):
            std = torch.exp(0.5 * logvar)
            return mu + eps * std

        def decode(self, z):
            h3 = F.relu(self.fc3(z))
            return torch.sigmoid(self.fc4(h3))

        def forward(self, x, eps):
            mu, logvar = self.encode(x.view(-1, 16))
            z = self.reparameterize(mu, logvar, eps)
            return self.decode(z), mu, logvar

    def loss_function(recon_x, x, mu, logvar):
        BCE = F.binary_cross_entropy(recon_x, x.view(-1, 16), reduction="sum")
        KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        return BCE + KLD

    model = init_weights(torch, VAE()).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x = torch.tensor(data((8, 4, 4), 3, 0.0, 1.0), device=device)
    rng = np.random.default_rng(4)
    losses = []
    model.train()
    for _ in range(steps):
        eps = torch.tensor(rng.standard_normal((8, 2)).astype(np.float32), device=device)
        optimizer.zero_grad()
        recon, mu, logvar = model(x, eps)
        loss = loss_function(recon, x, mu, logvar)
        loss.backward()
        optimizer.step()
        losses.append(loss.item() / len(x))
    return losses
