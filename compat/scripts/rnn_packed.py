# compat: rtol=0.3 atol=0.08
"""Variable-length sequence classification with LSTM and GRU over packed sequences."""
import numpy as np
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

torch.manual_seed(0)
rng = np.random.default_rng(0)

# Task: does the sequence contain more positive than negative entries?
lengths = rng.integers(3, 13, size=200)
seqs = [torch.from_numpy(rng.standard_normal((int(n), 1)).astype(np.float32)) for n in lengths]
labels = torch.tensor([int((s > 0).sum() > (s < 0).sum()) for s in seqs])
print("num sequences:", len(seqs), "max len:", max(len(s) for s in seqs),
      "positives:", labels.sum().item())


class RNNClassifier(nn.Module):
    def __init__(self, cell="lstm", hidden=16, bidirectional=False):
        super().__init__()
        rnn_cls = nn.LSTM if cell == "lstm" else nn.GRU
        self.rnn = rnn_cls(input_size=2, hidden_size=hidden, num_layers=1,
                           batch_first=True, bidirectional=bidirectional)
        self.head = nn.Linear(hidden * (2 if bidirectional else 1), 2)

    def forward(self, padded, lens):
        feats = torch.cat([padded, torch.sign(padded)], dim=-1)
        packed = pack_padded_sequence(feats, lens, batch_first=True, enforce_sorted=False)
        out, h = self.rnn(packed)
        if isinstance(h, tuple):
            h = h[0]
        last = torch.cat([h[-2], h[-1]], dim=-1) if self.rnn.bidirectional else h[-1]
        return self.head(last), out


def batches(bs=40):
    for i in range(0, len(seqs), bs):
        chunk = seqs[i:i + bs]
        lens = torch.tensor([len(s) for s in chunk])
        yield pad_sequence(chunk, batch_first=True), lens, labels[i:i + bs]


for cell, bi in [("lstm", False), ("gru", True)]:
    model = RNNClassifier(cell, bidirectional=bi)
    print(model)
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    for epoch in range(12):
        tot = 0.0
        for padded, lens, y in batches():
            logits, _ = model(padded, lens)
            loss = nn.functional.cross_entropy(logits, y)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            opt.step()
            tot += loss.item()
        if epoch in (0, 11):
            print(f"{cell} epoch {epoch + 1} loss {tot / 5:.4f}")
    with torch.no_grad():
        correct = 0
        for padded, lens, y in batches():
            logits, packed_out = model(padded, lens)
            correct += (logits.argmax(1) == y).sum().item()
        out, out_lens = pad_packed_sequence(packed_out, batch_first=True)
    print(cell, "packed output:", type(packed_out).__name__, "unpacked:", tuple(out.shape),
          out_lens[:5].tolist())
    print(f"{cell} accuracy: {correct / len(seqs):.2f}", "good:", correct / len(seqs) > 0.85)
