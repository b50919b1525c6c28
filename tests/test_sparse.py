"""Sparse COO/CSR tensors without PyTorch: expected values from numpy (dense arithmetic on
the same entries) and from PyTorch's documented sparse semantics."""

import warnings

import numpy as np
import pytest

import jtorch as torch

pytestmark = pytest.mark.filterwarnings("ignore:Sparse")

IDX = np.array([[1, 0, 1, 0], [0, 2, 0, 1]])
VAL = np.array([1.0, 2.0, 3.0, -4.0], np.float32)


def _dense(idx=IDX, val=VAL, shape=(2, 3)):
    out = np.zeros(shape, np.float32)
    np.add.at(out, tuple(idx), val)
    return out


def _coo():
    return torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(VAL), (2, 3))


def test_construction_and_parts():
    s = _coo()
    assert s.layout is torch.sparse_coo and s.is_sparse and not s.is_sparse_csr
    assert s.shape == (2, 3) and s._nnz() == 4 and not s.is_coalesced()
    assert (s.sparse_dim(), s.dense_dim()) == (2, 0)
    np.testing.assert_array_equal(s._indices().numpy(), IDX)
    with pytest.raises(RuntimeError, match="uncoalesced"):
        s.indices()
    np.testing.assert_array_equal(s.to_dense().numpy(), _dense())


def test_size_is_inferred_and_scalars_are_one_entry():
    s = torch.sparse_coo_tensor([[0, 4]], [1.0, 2.0])
    assert s.shape == (5,)
    assert torch.sparse_coo_tensor([[2]], [7.0]).is_coalesced()  # one entry: coalesced


def test_coalesce_sums_duplicates_in_index_order():
    c = _coo().coalesce()
    assert c.is_coalesced() and c._nnz() == 3
    np.testing.assert_array_equal(c.indices().numpy(), [[0, 0, 1], [1, 2, 0]])
    np.testing.assert_allclose(c.values().numpy(), [-4.0, 2.0, 4.0])
    assert c.coalesce() is c


def test_to_sparse_round_trip_and_csr():
    a = np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]], np.float32)
    s = torch.tensor(a).to_sparse()
    assert s.is_coalesced() and s._nnz() == 3
    np.testing.assert_array_equal(s.to_dense().numpy(), a)
    csr = torch.tensor(a).to_sparse_csr()
    np.testing.assert_array_equal(csr.crow_indices().numpy(), [0, 1, 3])
    np.testing.assert_array_equal(csr.col_indices().numpy(), [1, 0, 2])
    np.testing.assert_array_equal(csr.to_dense().numpy(), a)
    np.testing.assert_array_equal(csr.to_sparse().to_dense().numpy(), a)


def test_hybrid_to_sparse_keeps_dense_rows():
    a = np.array([[0.0, 1.0], [0.0, 0.0], [2.0, 3.0]], np.float32)
    s = torch.tensor(a).to_sparse(1)
    assert (s.sparse_dim(), s.dense_dim(), s._nnz()) == (1, 1, 2)
    np.testing.assert_array_equal(s._values().numpy(), a[[0, 2]])


@pytest.mark.parametrize("op", ["sparse.mm", "mm", "matmul", "spmm", "csr"])
def test_products_match_dense(op):
    d = np.arange(12, dtype=np.float32).reshape(3, 4)
    s, dt = _coo(), torch.tensor(d)
    out = {
        "sparse.mm": lambda: torch.sparse.mm(s, dt),
        "mm": lambda: torch.mm(s, dt),
        "matmul": lambda: s @ dt,
        "spmm": lambda: torch.spmm(s, dt),
        "csr": lambda: s.to_sparse_csr() @ dt,
    }[op]()
    np.testing.assert_allclose(out.numpy(), _dense() @ d, rtol=1e-6)


def test_dense_at_sparse_and_sparse_at_sparse():
    d = np.arange(4, dtype=np.float32).reshape(2, 2)
    np.testing.assert_allclose((torch.tensor(d) @ _coo()).numpy(), d @ _dense(), rtol=1e-6)
    prod = _coo() @ _coo().t()
    assert prod.is_sparse and prod.is_coalesced()
    np.testing.assert_allclose(prod.to_dense().numpy(), _dense() @ _dense().T, rtol=1e-6)


def test_gradients_reach_dense_operand_and_values():
    v = torch.tensor(VAL, requires_grad=True)
    s = torch.sparse_coo_tensor(torch.tensor(IDX), v, (2, 3))
    d = torch.tensor(np.arange(12, dtype=np.float32).reshape(3, 4), requires_grad=True)
    out = torch.sparse.mm(s, d)
    (out * out).sum().backward()
    g = 2 * (_dense() @ d.detach().numpy())  # dL/dout
    np.testing.assert_allclose(d.grad.numpy(), _dense().T @ g, rtol=1e-5)
    # each stored value's gradient: dL/dout[row] . d[col]
    want = [(g[r] * d.detach().numpy()[c]).sum() for r, c in IDX.T]
    np.testing.assert_allclose(v.grad.numpy(), want, rtol=1e-5)


def test_sparse_leaf_grad_is_sparse_on_its_pattern():
    s = torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(VAL), (2, 3), requires_grad=True)
    assert s.is_leaf and s.requires_grad
    (s.to_dense() * 3).sum().backward()
    assert s.grad.is_sparse
    np.testing.assert_allclose(s.grad._values().numpy(), [3.0] * 4)


def test_empty_sparse_to_dense_keeps_the_graph():
    # PyTorch: to_dense() of a sparse tensor with no entries still requires grad (ToDenseBackward0)
    s = torch.eye(0, 5).to_sparse_csr().requires_grad_(True)
    d = s.to_dense()
    assert d.requires_grad and tuple(d.shape) == (0, 5)
    (d * 2).sum().backward()
    assert s.grad.layout == torch.sparse_csr and tuple(s.grad.shape) == (0, 5)


def test_sum_and_softmax():
    s = _coo()
    assert s.sum().item() == pytest.approx(VAL.sum())
    col = torch.sparse.sum(s, 0)
    assert col.is_sparse
    np.testing.assert_allclose(col.to_dense().numpy(), _dense().sum(0))
    sm = torch.sparse.softmax(s, 1).to_dense().numpy()
    # over the specified entries of each row (coalesced: row 0 has -4 at col 1, 2 at col 2)
    e = np.exp([-4.0, 2.0] - np.max([-4.0, 2.0]))
    np.testing.assert_allclose(sm[0, 1:], e / e.sum(), rtol=1e-6)
    np.testing.assert_allclose(sm[1, 0], 1.0)


def test_elementwise_keep_sparsity():
    s = _coo()
    for out, want in [
        (s * 2, _dense() * 2),
        (-s, -_dense()),
        (s / 4, _dense() / 4),
        (s + s, 2 * _dense()),
        (s.abs(), np.abs(_dense())),
        (s**2, _dense() ** 2),
    ]:
        assert out.is_sparse
        np.testing.assert_allclose(out.to_dense().numpy(), want, rtol=1e-6)
    np.testing.assert_allclose((torch.ones(2, 3) + s).numpy(), 1 + _dense())
    with pytest.raises(RuntimeError, match="add\\(sparse, dense\\) is not supported"):
        s + torch.ones(2, 3)
    with pytest.raises(NotImplementedError, match="'aten::exp'.*'SparseCPU'"):
        s.exp()


def test_add_follows_pytorchs_merge():
    # both inputs as stored (uncoalesced): PyTorch walks them like sorted lists
    a = torch.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0], (2, 3))
    out = a + _coo()
    assert out._nnz() == 6 and not out.is_coalesced()
    np.testing.assert_allclose(out.to_dense().numpy(), a.to_dense().numpy() + _dense())


def test_printing():
    s = torch.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (3,))
    assert repr(s) == (
        "tensor(indices=tensor([[0, 1]]),\n       values=tensor([1., 2.]),\n"
        "       size=(3,), nnz=2, layout=torch.sparse_coo)"
    )
    csr = torch.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse_csr()
    assert repr(csr) == (
        "tensor(crow_indices=tensor([0, 1, 2]),\n       col_indices=tensor("
        "[1, 0]),\n       values=tensor([1., 2.]), size=(2, 2), nnz=2, "
        "layout=torch.sparse_csr)"
    )


def test_embedding_sparse_gradient():
    emb = torch.nn.Embedding(5, 2, sparse=True)
    emb(torch.tensor([3, 1, 3])).sum().backward()
    g = emb.weight.grad
    assert g.is_sparse and not g.is_coalesced()
    np.testing.assert_array_equal(g._indices().numpy(), [[3, 1, 3]])
    np.testing.assert_array_equal(g.to_dense().numpy()[[1, 3]], [[1, 1], [2, 2]])
    before = emb.weight.detach().numpy().copy()
    torch.optim.SGD(emb.parameters(), lr=0.5).step()
    want = before - 0.5 * g.to_dense().numpy()
    np.testing.assert_allclose(emb.weight.detach().numpy(), want, rtol=1e-6)


def test_dense_only_optimizers_refuse_sparse_gradients():
    emb = torch.nn.Embedding(5, 2, sparse=True)
    emb(torch.tensor([1])).sum().backward()
    with pytest.raises(RuntimeError, match="Adam does not support sparse gradients"):
        torch.optim.Adam(emb.parameters()).step()


def test_save_load(tmp_path):
    path = str(tmp_path / "s.pt")
    torch.save({"s": _coo(), "c": _coo().to_sparse_csr()}, path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        back = torch.load(path)
    assert back["s"]._nnz() == 4 and not back["s"].is_coalesced()
    np.testing.assert_array_equal(back["s"].to_dense().numpy(), _dense())
    np.testing.assert_array_equal(back["c"].to_dense().numpy(), _dense())


def test_sparse_argument_to_unsupported_op_raises_clearly():
    with pytest.raises(NotImplementedError, match="SparseCPU"):
        torch.cumsum(_coo(), 0)
    with pytest.raises(TypeError, match="Cannot assign to a sparse tensor"):
        _coo()[0] = 1.0
