"""PyTorch's word_language_model example, shrunk: Embedding, a 2-layer tanh ``nn.RNN``
(dropout 0), a decoder whose weight is *tied* to the embedding's
(``self.decoder.weight = self.encoder.weight``), hidden state repackaged between batches,
gradient clipping, the manual SGD update of the example (``p.data.add_(p.grad, alpha=-lr)``),
and StepLR-style decay; one eval loss at the end."""
from .common import init_weights, labels


def run(torch, device="cpu", steps=3):
    nn = torch.nn

    class RNNModel(nn.Module):
        def __init__(self, ntoken, ninp, nlayers):
            super().__init__()
            self.drop = nn.Dropout(0.0)
            self.encoder = nn.Embedding(ntoken, ninp)
            self.rnn = nn.RNN(ninp, ninp, nlayers, nonlinearity="tanh", dropout=0.0)
            self.decoder = nn.Linear(ninp, ntoken)
            self.decoder.weight = self.encoder.weight  # weight tying
            self.nhid, self.nlayers = ninp, nlayers

        def forward(self, input, hidden):
            emb = self.drop(self.encoder(input))
            output, hidden = self.rnn(emb, hidden)
            output = self.drop(output)
            decoded = self.decoder(output).view(-1, self.encoder.num_embeddings)
            return nn.functional.log_softmax(decoded, dim=1), hidden

        def init_hidden(self, bsz):
            weight = next(self.parameters())
            return weight.new_zeros(self.nlayers, bsz, self.nhid)

    ntokens = 11
    model = RNNModel(ntokens, 8, 2)
    assert model.decoder.weight is model.encoder.weight
    model = init_weights(torch, model).to(device)
    assert len(list(model.parameters())) == 1 + 2 * 4 + 1  # the tied weight counted once
    criterion = nn.NLLLoss()
    corpus = torch.tensor(labels((4 * steps + 1, 2), ntokens, 27), device=device)
    lr, bptt = 2.0, 4
    hidden = model.init_hidden(2)
    losses = []
    model.train()
    for i in range(0, steps * bptt, bptt):
        data, targets = corpus[i:i + bptt], corpus[i + 1:i + 1 + bptt].reshape(-1)
        hidden = hidden.detach()  # repackage_hidden
        model.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        lr /= 4.0
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        output, _ = model(corpus[:-1], model.init_hidden(2))
        losses.append(criterion(output, corpus[1:].reshape(-1)).item())
    return losses
