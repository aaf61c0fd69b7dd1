"""A character-level language model (Karpathy's char-rnn, PyTorch's word_language_model):
Embedding, a 2-layer LSTM (batch_first), a Linear decoder over the vocabulary, the loss
over ``output.view(-1, ntokens)``; gradient clipping; plain SGD."""
from .common import init_weights, labels


def run(torch, device="cpu", steps=3):
    nn = torch.nn

    class CharRNN(nn.Module):
        def __init__(self, ntoken, ninp, nhid, nlayers):
            super().__init__()
            self.encoder = nn.Embedding(ntoken, ninp)
            self.rnn = nn.LSTM(ninp, nhid, nlayers, batch_first=True)
            self.decoder = nn.Linear(nhid, ntoken)

        def forward(self, input, hidden):
            emb = self.encoder(input)
            output, hidden = self.rnn(emb, hidden)
            return self.decoder(output), hidden

        def init_hidden(self, bsz):
            weight = next(self.parameters())
            return (weight.new_zeros(2, bsz, 16), weight.new_zeros(2, bsz, 16))

    ntokens = 12
    model = init_weights(torch, CharRNN(ntokens, 8, 16, 2)).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    text = torch.tensor(labels((3, 7), ntokens, 5), device=device)
    inputs, targets = text[:, :-1], text[:, 1:]
    losses = []
    model.train()
    for _ in range(steps):
        hidden = model.init_hidden(3)
        optimizer.zero_grad()
        output, hidden = model(inputs, hidden)
        loss = criterion(output.reshape(-1, ntokens), targets.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        optimizer.step()
        losses.append(loss.item())
    return losses
