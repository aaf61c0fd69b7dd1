"""A sequence-to-sequence ``nn.Transformer`` (PyTorch's "language translation" tutorial):
token embeddings scaled by sqrt(d_model), the sinusoidal positional encoding as a buffer,
``generate_square_subsequent_mask`` for the decoder, key-padding masks for source, target
and memory, and a cross-entropy that ignores the padding, with label smoothing; Adam."""
import math

import numpy as np

from .common import init_weights

PAD = 0


def run(torch, device="cpu", steps=3):
    nn = torch.nn

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, max_len=32):
            super().__init__()
            position = torch.arange(max_len).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
            pe = torch.zeros(max_len, 1, d_model)
            pe[:, 0, 0::2] = torch.sin(position * div_term)
            pe[:, 0, 1::2] = torch.cos(position * div_term)
            self.register_buffer("pe", pe)

        def forward(self, x):  # (seq, batch, d_model)
            return x + self.pe[:x.size(0)]

    class Seq2SeqTransformer(nn.Module):
        def __init__(self, src_vocab, tgt_vocab, d_model=16, nhead=2):
            super().__init__()
            self.d_model = d_model
            self.src_tok = nn.Embedding(src_vocab, d_model)
            self.tgt_tok = nn.Embedding(tgt_vocab, d_model)
            self.pos = PositionalEncoding(d_model)
            self.transformer = nn.Transformer(d_model=d_model, nhead=nhead, num_encoder_layers=2,
                                              num_decoder_layers=1, dim_feedforward=32, dropout=0.0,
                                              activation="gelu")
            self.generator = nn.Linear(d_model, tgt_vocab)

        def forward(self, src, tgt, tgt_mask, src_padding_mask, tgt_padding_mask):
            src_emb = self.pos(self.src_tok(src) * math.sqrt(self.d_model))
            tgt_emb = self.pos(self.tgt_tok(tgt) * math.sqrt(self.d_model))
            outs = self.transformer(src_emb, tgt_emb, tgt_mask=tgt_mask, src_key_padding_mask=src_padding_mask,
                                    tgt_key_padding_mask=tgt_padding_mask, memory_key_padding_mask=src_padding_mask)
            return self.generator(outs)

    rng = np.random.default_rng(7)
    src = rng.integers(1, 9, (6, 3))  # (seq, batch)
    src[4:, 0] = PAD
    tgt = rng.integers(1, 11, (6, 3))
    tgt[5:, 1] = PAD
    src = torch.tensor(src, device=device)
    tgt = torch.tensor(tgt, device=device)
    tgt_input, tgt_out = tgt[:-1, :], tgt[1:, :]

    model = init_weights(torch, Seq2SeqTransformer(9, 11)).to(device)
    loss_fn = nn.CrossEntropyLoss(ignore_index=PAD, label_smoothing=0.1)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
    tgt_mask = nn.Transformer.generate_square_subsequent_mask(tgt_input.size(0)).to(device)
    src_padding_mask = (src == PAD).transpose(0, 1)
    tgt_padding_mask = (tgt_input == PAD).transpose(0, 1)
    losses = []
    model.train()
    for _ in range(steps):
        logits = model(src, tgt_input, tgt_mask, src_padding_mask, tgt_padding_mask)
        optimizer.zero_grad()
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
