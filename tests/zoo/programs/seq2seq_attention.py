"""PyTorch's "NLP From Scratch: Translation with a Sequence to Sequence Network and
Attention" tutorial, batched and shrunk: a GRU encoder, a decoder with Bahdanau
(additive) attention over the encoder outputs (``torch.bmm``, softmax, ``torch.cat``),
teacher forcing, greedy decoding with ``topk`` and ``detach``, ``NLLLoss`` of
``log_softmax``; two Adam optimizers."""
from .common import init_weights, labels

SOS = 0


def run(torch, device="cpu", steps=3):
    nn = torch.nn
    F = torch.nn.functional

    class EncoderRNN(nn.Module):
        def __init__(self, input_size, hidden_size):
            super().__init__()
            self.embedding = nn.Embedding(input_size, hidden_size)
            self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
            self.dropout = nn.Dropout(0.0)

        def forward(self, input):
            embedded = self.dropout(self.embedding(input))
            return self.gru(embedded)

    class BahdanauAttention(nn.Module):
        def __init__(self, hidden_size):
            super().__init__()
            self.Wa = nn.Linear(hidden_size, hidden_size)
            self.Ua = nn.Linear(hidden_size, hidden_size)
            self.Va = nn.Linear(hidden_size, 1)

        def forward(self, query, keys):
            scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
            scores = scores.squeeze(2).unsqueeze(1)
            weights = F.softmax(scores, dim=-1)
            context = torch.bmm(weights, keys)
            return context, weights

    class AttnDecoderRNN(nn.Module):
        def __init__(self, hidden_size, output_size, max_length):
            super().__init__()
            self.max_length = max_length
            self.embedding = nn.Embedding(output_size, hidden_size)
            self.attention = BahdanauAttention(hidden_size)
            self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
            self.out = nn.Linear(hidden_size, output_size)

        def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
            batch_size = encoder_outputs.size(0)
            decoder_input = torch.empty(batch_size, 1, dtype=torch.long, device=device).fill_(SOS)
            decoder_hidden = encoder_hidden
            decoder_outputs, attentions = [], []
            for i in range(self.max_length):
                decoder_output, decoder_hidden, attn_weights = self.forward_step(
                    decoder_input, decoder_hidden, encoder_outputs)
                decoder_outputs.append(decoder_output)
                attentions.append(attn_weights)
                if target_tensor is not None:
                    decoder_input = target_tensor[:, i].unsqueeze(1)  # teacher forcing
                else:
                    _, topi = decoder_output.topk(1)
                    decoder_input = topi.squeeze(-1).detach()
            decoder_outputs = torch.cat(decoder_outputs, dim=1)
            decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
            return decoder_outputs, decoder_hidden, torch.cat(attentions, dim=1)

        def forward_step(self, input, hidden, encoder_outputs):
            embedded = self.embedding(input)
            query = hidden.permute(1, 0, 2)
            context, attn_weights = self.attention(query, encoder_outputs)
            input_gru = torch.cat((embedded, context), dim=2)
            output, hidden = self.gru(input_gru, hidden)
            return self.out(output), hidden, attn_weights

    encoder = init_weights(torch, EncoderRNN(9, 12), seed=1).to(device)
    decoder = init_weights(torch, AttnDecoderRNN(12, 10, max_length=5), seed=2).to(device)
    enc_opt = torch.optim.Adam(encoder.parameters(), lr=0.01)
    dec_opt = torch.optim.Adam(decoder.parameters(), lr=0.01)
    criterion = nn.NLLLoss()
    src = torch.tensor(labels((3, 6), 9, 25), device=device)
    tgt = torch.tensor(labels((3, 5), 10, 26), device=device)
    losses = []
    for _ in range(steps):
        enc_opt.zero_grad()
        dec_opt.zero_grad()
        encoder_outputs, encoder_hidden = encoder(src)
        decoder_outputs, _, attn = decoder(encoder_outputs, encoder_hidden, tgt)
        loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)), tgt.view(-1))
        loss.backward()
        enc_opt.step()
        dec_opt.step()
        losses.append(loss.item())
    with torch.no_grad():  # greedy decoding
        encoder_outputs, encoder_hidden = encoder(src)
        decoder_outputs, _, attn = decoder(encoder_outputs, encoder_hidden)
        losses.append(criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)), tgt.view(-1)).item())
        losses += decoder_outputs.argmax(-1).view(-1).float().tolist()
    return losses
