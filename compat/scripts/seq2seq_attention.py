# compat: rtol=0.3 atol=0.1
"""Seq2seq with a bidirectional GRU encoder and a Luong-attention GRU decoder: reverse digits."""
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

SOS, EOS, PAD = 0, 1, 2
N_DIGITS = 6
VOCAB = 3 + N_DIGITS
random.seed(0)
torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self, vocab, emb, hidden):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb)
        self.rnn = nn.GRU(emb, hidden, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * hidden, hidden)

    def forward(self, src):
        outputs, hidden = self.rnn(self.embedding(src))
        hidden = torch.tanh(self.fc(torch.cat((hidden[-2], hidden[-1]), dim=1)))
        return outputs, hidden.unsqueeze(0)


class Attention(nn.Module):
    def __init__(self, enc_dim, dec_dim):
        super().__init__()
        self.W = nn.Linear(enc_dim, dec_dim, bias=False)

    def forward(self, dec_h, enc_out):
        # dec_h: (B, H), enc_out: (B, S, 2H) -> weights (B, S)
        scores = torch.bmm(self.W(enc_out), dec_h.unsqueeze(2)).squeeze(2)
        return F.softmax(scores, dim=1)


class Decoder(nn.Module):
    def __init__(self, vocab, emb, hidden):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb)
        self.attn = Attention(2 * hidden, hidden)
        self.rnn = nn.GRU(emb + 2 * hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden + 2 * hidden, vocab)

    def forward(self, tok, hidden, enc_out):
        emb = self.embedding(tok).unsqueeze(1)
        a = self.attn(hidden[-1], enc_out)
        context = torch.bmm(a.unsqueeze(1), enc_out)
        output, hidden = self.rnn(torch.cat((emb, context), dim=2), hidden)
        logits = self.out(torch.cat((output.squeeze(1), context.squeeze(1)), dim=1))
        return logits, hidden, a


class Seq2Seq(nn.Module):
    def __init__(self, vocab, emb=16, hidden=32):
        super().__init__()
        self.encoder = Encoder(vocab, emb, hidden)
        self.decoder = Decoder(vocab, emb, hidden)

    def forward(self, src, trg, teacher_forcing=0.5):
        B, T = trg.shape
        enc_out, hidden = self.encoder(src)
        outputs = torch.zeros(B, T, self.decoder.out.out_features)
        tok = trg[:, 0]
        for t in range(1, T):
            logits, hidden, _ = self.decoder(tok, hidden, enc_out)
            outputs[:, t] = logits
            use_tf = random.random() < teacher_forcing
            tok = trg[:, t] if use_tf else logits.argmax(1)
        return outputs

    @torch.no_grad()
    def translate(self, src, max_len):
        enc_out, hidden = self.encoder(src)
        tok = torch.full((src.size(0),), SOS, dtype=torch.long)
        result, attn = [], []
        for _ in range(max_len):
            logits, hidden, a = self.decoder(tok, hidden, enc_out)
            tok = logits.argmax(1)
            result.append(tok)
            attn.append(a)
        return torch.stack(result, 1), torch.stack(attn, 1)


def make_batch(rng, n, length=5):
    digits = rng.integers(3, VOCAB, size=(n, length))
    src = np.concatenate([digits, np.full((n, 1), EOS)], axis=1)
    trg = np.concatenate([np.full((n, 1), SOS), digits[:, ::-1], np.full((n, 1), EOS)], axis=1)
    return torch.from_numpy(src), torch.from_numpy(trg.copy())


rng = np.random.default_rng(0)
model = Seq2Seq(VOCAB)
print(model)
print(f"The model has {sum(p.numel() for p in model.parameters() if p.requires_grad):,} "
      "trainable parameters")
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
criterion = nn.CrossEntropyLoss(ignore_index=PAD)

window = []
for it in range(120):
    src, trg = make_batch(rng, 32)
    model.train()
    # teacher forcing always on: the decoder sees the reference prefix (deterministic)
    output = model(src, trg, teacher_forcing=1.0)
    loss = criterion(output[:, 1:].reshape(-1, VOCAB), trg[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1)
    optimizer.step()
    window.append(loss.item())
    if it % 30 == 29:
        avg = sum(window) / len(window)
        print(f"iters {it - 29:3d}-{it:3d} | train loss {avg:.3f} | ppl {np.exp(avg):7.3f}")
        window = []

model.eval()
src, trg = make_batch(rng, 64)
pred, attn = model.translate(src, max_len=6)
exact = (pred == trg[:, 1:]).all(1).float().mean().item()
print("attention:", tuple(attn.shape), "rows sum to 1:",
      torch.allclose(attn.sum(-1), torch.ones(64, 6), atol=1e-5))
print("example:", src[0].tolist(), "->", pred[0].tolist())
print(f"sequence accuracy: {exact:.2f}; above 0.8: {exact > 0.8}")
