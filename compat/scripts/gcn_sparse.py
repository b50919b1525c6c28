# compat: rtol=2e-3 atol=2e-4
"""A graph convolutional network (Kipf & Welling) on a synthetic three-community graph, in
the style of the GCN tutorials: the symmetric-normalised adjacency D^-1/2 (A + I) D^-1/2 is a
sparse COO tensor, layers propagate with torch.sparse.mm / @ / spmm, learnable node
embeddings use nn.Embedding(sparse=True) with SparseAdam beside Adam for the dense weights."""
import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

rng = np.random.default_rng(7)
N, C, FEATS = 60, 3, 8
labels_np = np.repeat(np.arange(C), N // C)

# a stochastic block model: dense within a community, sparse across
edges = set()
for i in range(N):
    for j in range(i + 1, N):
        p = 0.25 if labels_np[i] == labels_np[j] else 0.02
        if rng.random() < p:
            edges.add((i, j))
src, dst = np.array(sorted(edges)).T
print("nodes:", N, "| undirected edges:", len(edges))

# edge_index with both directions and self loops, as graph libraries build it
row = np.concatenate([src, dst, np.arange(N)])
col = np.concatenate([dst, src, np.arange(N)])
edge_index = torch.tensor(np.stack([row, col]))
ones = torch.ones(edge_index.shape[1])
A = torch.sparse_coo_tensor(edge_index, ones, (N, N))
print("A:", A.layout, A.shape, "nnz", A._nnz(), "coalesced", A.is_coalesced())
A = A.coalesce()
deg = torch.sparse.sum(A, dim=1).to_dense()
print("degree min/max/mean:", deg.min().item(), deg.max().item(), round(deg.mean().item(), 4))
d_inv_sqrt = deg.pow(-0.5)
r, c = A.indices()
adj = torch.sparse_coo_tensor(A.indices(), d_inv_sqrt[r] * A.values() * d_inv_sqrt[c],
                              (N, N)).coalesce()
print("adj values[:5]:", [round(v, 4) for v in adj.values()[:5].tolist()])
print("row sums[:5]:", [round(v, 4) for v in torch.sparse.sum(adj, 1).to_dense()[:5].tolist()])

# the same normalisation on a 4-node path graph, printed whole
small = torch.tensor([[1., 1., 0., 0.], [1., 1., 1., 0.], [0., 1., 1., 1.], [0., 0., 1., 1.]])
sd = small.sum(1).pow(-0.5)
print((sd[:, None] * small * sd[None, :]).to_sparse())
print((sd[:, None] * small * sd[None, :]).to_sparse_csr())

# node features: a community signal plus noise
centers = rng.normal(0, 1, (C, FEATS))
X = torch.tensor((centers[labels_np] + rng.normal(0, 3.0, (N, FEATS))).astype(np.float32))
y = torch.tensor(labels_np)
train_mask = torch.tensor(np.arange(N) % 4 == 0)
test_mask = ~train_mask


def init_linear(layer):
    with torch.no_grad():
        layer.weight.copy_(torch.tensor(rng.normal(0, 0.3, tuple(layer.weight.shape))
                                        .astype(np.float32)))
        layer.bias.zero_()


class GCN(nn.Module):
    def __init__(self, in_dim, hidden, out_dim, emb_dim=4):
        super().__init__()
        self.emb = nn.Embedding(N, emb_dim, sparse=True)
        with torch.no_grad():
            self.emb.weight.copy_(torch.tensor(rng.normal(0, 0.1, (N, emb_dim))
                                               .astype(np.float32)))
        self.lin1 = nn.Linear(in_dim + emb_dim, hidden)
        self.lin2 = nn.Linear(hidden, out_dim)
        init_linear(self.lin1)
        init_linear(self.lin2)

    def forward(self, x, adj, nodes):
        h = torch.cat([x, self.emb(nodes)], 1)
        h = F.relu(torch.sparse.mm(adj, self.lin1(h)))       # propagate, then activate
        h = adj @ self.lin2(h)
        return torch.spmm(adj, torch.eye(N)) @ h * 0.5 + h * 0.5


model = GCN(FEATS, 16, C)
nodes = torch.arange(N)
print(model)
dense_opt = torch.optim.Adam([p for n, p in model.named_parameters() if not n.startswith("emb")],
                             lr=0.02, weight_decay=5e-4)
sparse_opt = torch.optim.SparseAdam(list(model.emb.parameters()), lr=0.02)

out = model(X, adj, nodes)
loss = F.cross_entropy(out[train_mask], y[train_mask])
loss.backward()
print("initial loss:", round(loss.item(), 5))
g = model.emb.weight.grad
print("embedding grad:", g.layout, "nnz", g._nnz(), "coalesced", g.is_coalesced(),
      "norm", round(g.coalesce().values().norm().item(), 6))
print("lin1 grad norm:", round(model.lin1.weight.grad.norm().item(), 6))

for epoch in range(1, 101):
    dense_opt.zero_grad()
    sparse_opt.zero_grad()
    out = model(X, adj, nodes)
    loss = F.cross_entropy(out[train_mask], y[train_mask])
    loss.backward()
    dense_opt.step()
    sparse_opt.step()
    if epoch % 20 == 0:
        pred = out.argmax(1)
        acc = (pred[test_mask] == y[test_mask]).float().mean().item()
        print(f"epoch {epoch:3d} loss {loss.item():.5f} test acc {acc:.4f}")

with torch.no_grad():
    pred = model(X, adj, nodes).argmax(1)
print("train acc:", (pred[train_mask] == y[train_mask]).float().mean().item())
print("test acc:", (pred[test_mask] == y[test_mask]).float().mean().item())
emb_state = sparse_opt.state[model.emb.weight]
print("state:", sorted(emb_state), emb_state["step"])
