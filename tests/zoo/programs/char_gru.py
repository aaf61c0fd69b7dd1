"""Truncated backpropagation through time with a GRU (PyTorch's word_language_model
pattern): the text is cut into chunks, the hidden state is carried from one chunk to the
next and ``detach()``-ed so that gradients stop at the chunk boundary; NLL of log_softmax;
Adam."""
from .common import init_weights, labels


def run(torch, device="cpu", steps=3):
    nn = torch.nn
    F = torch.nn.functional

    class CharGRU(nn.Module):
        def __init__(self, vocab, hidden):
            super().__init__()
            self.embed = nn.Embedding(vocab, hidden)
            self.gru = nn.GRU(hidden, hidden)  # (seq, batch, feature)
            self.out = nn.Linear(hidden, vocab)

        def forward(self, x, h):
            y, h = self.gru(self.embed(x), h)
            return F.log_softmax(self.out(y), dim=-1), h

    vocab, bptt = 10, 4
    model = init_weights(torch, CharGRU(vocab, 12)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    text = torch.tensor(labels((4 * steps + 1, 2), vocab, 6), device=device)  # (length, batch)
    h = torch.zeros(1, 2, 12, device=device)
    losses = []
    for i in range(0, steps * bptt, bptt):
        x, y = text[i:i + bptt], text[i + 1:i + 1 + bptt]
        h = h.detach()
        optimizer.zero_grad()
        logp, h = model(x, h)
        loss = F.nll_loss(logp.view(-1, vocab), y.view(-1))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
