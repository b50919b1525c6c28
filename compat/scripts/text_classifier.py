# compat: rtol=0.3 atol=0.08
"""Bag-of-words text classification in the style of the torchtext tutorial: a vocabulary built
from a tokenised corpus, nn.EmbeddingBag with offsets, a collate function, gradient clipping."""
import collections
import re

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader

TOPICS = {
    0: "ball goal team match player score league coach win season",
    1: "stock market price bank trade profit shares growth economy rate",
    2: "cpu gpu code software chip memory cloud data model compute",
}
FILLER = "the a of to and in on for with is was it this that".split()
rng = np.random.default_rng(11)


def make_corpus(n):
    out = []
    for _ in range(n):
        label = int(rng.integers(0, 3))
        words = list(rng.choice(TOPICS[label].split(), size=4)) + list(rng.choice(FILLER, size=5))
        rng.shuffle(words)
        out.append((label, " ".join(words)))
    return out


def tokenizer(text):
    return re.findall(r"[a-z]+", text.lower())


train_iter, test_iter = make_corpus(300), make_corpus(90)
counter = collections.Counter(tok for _, text in train_iter for tok in tokenizer(text))
itos = ["<unk>"] + sorted(counter, key=lambda w: (-counter[w], w))
stoi = {w: i for i, w in enumerate(itos)}
print("vocab size:", len(itos), "| most common:", itos[1:6])


def text_pipeline(text):
    return [stoi.get(tok, 0) for tok in tokenizer(text)]


def collate_batch(batch):
    label_list, text_list, offsets = [], [], [0]
    for label, text in batch:
        label_list.append(label)
        processed = torch.tensor(text_pipeline(text), dtype=torch.int64)
        text_list.append(processed)
        offsets.append(processed.size(0))
    labels = torch.tensor(label_list, dtype=torch.int64)
    offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
    return labels, torch.cat(text_list), offsets


class TextClassificationModel(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_class):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, mode="mean")
        self.fc = nn.Linear(embed_dim, num_class)
        self.init_weights()

    def init_weights(self):
        initrange = 0.5
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.fc.weight.data.uniform_(-initrange, initrange)
        self.fc.bias.data.zero_()

    def forward(self, text, offsets):
        return self.fc(self.embedding(text, offsets))


torch.manual_seed(0)
model = TextClassificationModel(len(itos), 16, 3)
print(model)
labels, text, offsets = collate_batch(train_iter[:3])
print("batch:", labels.tolist(), text.shape, offsets.tolist())

loader = DataLoader(train_iter, batch_size=32, shuffle=False, collate_fn=collate_batch)
test_loader = DataLoader(test_iter, batch_size=45, collate_fn=collate_batch)
criterion = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=4.0)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.5)


def evaluate(dataloader):
    model.eval()
    total_acc, total_count = 0, 0
    with torch.no_grad():
        for label, text, offsets in dataloader:
            predicted_label = model(text, offsets)
            total_acc += (predicted_label.argmax(1) == label).sum().item()
            total_count += label.size(0)
    return total_acc / total_count


for epoch in range(1, 5):
    model.train()
    total_loss, batches = 0.0, 0
    for label, text, offsets in loader:
        optimizer.zero_grad()
        loss = criterion(model(text, offsets), label)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
        total_loss += loss.item()
        batches += 1
    scheduler.step()
    if epoch > 1:
        print(f"| end of epoch {epoch:3d} | loss {total_loss / batches:.4f} "
              f"| lr {scheduler.get_last_lr()[0]:.2f}")
acc = evaluate(test_loader)
print(f"test accuracy {acc:8.3f}; above 0.9: {acc > 0.9}")
