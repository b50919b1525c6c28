# compat: rtol=0.3 atol=0.1
"""Character-level language model: Embedding + 2-layer LSTM, truncated BPTT, then sampling."""
import torch
import torch.nn as nn
import torch.nn.functional as F

text = "the quick brown fox jumps over the lazy dog. " * 12
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
itos = {i: c for c, i in stoi.items()}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
print(f"corpus: {len(text)} chars, vocab {len(chars)}: {''.join(chars)!r}")


class CharLSTM(nn.Module):
    def __init__(self, vocab, emb=16, hidden=64, layers=2, dropout=0.1):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, layers, dropout=dropout)
        self.proj = nn.Linear(hidden, vocab)

    def forward(self, idx, state=None):
        out, state = self.lstm(self.embed(idx), state)
        return self.proj(out), state


torch.manual_seed(0)
model = CharLSTM(len(chars))
print(model)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

seq_len, batch = 16, 8
# lay the corpus out as `batch` parallel streams, (time, batch) like nn.LSTM's default
usable = (len(data) - 1) // batch * batch
streams = data[:usable].view(batch, -1).t().contiguous()
targets = data[1:usable + 1].view(batch, -1).t().contiguous()
print("streams:", streams.shape, streams.dtype)

for epoch in range(30):
    state = None
    total, count = 0.0, 0
    for t in range(0, streams.size(0) - seq_len + 1, seq_len):
        x = streams[t:t + seq_len]
        y = targets[t:t + seq_len]
        if state is not None:
            state = tuple(s.detach() for s in state)
        logits, state = model(x, state)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
        total += loss.item()
        count += 1
    if epoch == 0 or (epoch >= 14 and epoch % 5 == 4):
        avg = total / count
        print(f"epoch {epoch} loss {avg:.3f} ppl {torch.exp(torch.tensor(avg)):.2f}")


@torch.no_grad()
def generate(prompt, n, greedy=True, temperature=1.0):
    model.eval()
    idx = torch.tensor([stoi[c] for c in prompt]).unsqueeze(1)
    logits, state = model(idx)
    out = list(prompt)
    for _ in range(n):
        last = logits[-1, 0] / temperature
        if greedy:
            nxt = last.argmax().item()
        else:
            nxt = torch.multinomial(F.softmax(last, dim=-1), 1).item()
        out.append(itos[nxt])
        logits, state = model(torch.tensor([[nxt]]), state)
    return "".join(out)


print("greedy:", generate("the quick", 30))
sample = generate("the ", 40, greedy=False, temperature=0.8)
print("sampled length:", len(sample), "in vocab:", all(c in stoi for c in sample))
