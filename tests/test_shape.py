"""Shape and joining ops against numpy and PyTorch's documented behaviour."""

import numpy as np
import pytest

import jtorch as torch

from .helpers import same, t

A = np.arange(6.0, dtype=np.float32).reshape(2, 3)


# ---------------------------------------------------------------------------
# Joining


def test_cat_values_promotion_and_out():
    x = t(A)
    same(torch.cat([x, x], 1), np.concatenate([A, A], 1), torch.float32)
    same(torch.concat((x, x)), np.concatenate([A, A]))
    same(torch.concatenate([x, x], axis=1), np.concatenate([A, A], 1))
    xi = torch.arange(6, dtype=torch.int32).reshape(2, 3)
    same(torch.cat([xi, t(A, torch.float64)]), np.concatenate([A, A]), torch.float64)
    out = torch.empty(0)
    r = torch.cat([x, x], -1, out=out)
    assert r is out
    same(out, np.concatenate([A, A], 1))
    with pytest.raises(RuntimeError, match="can't be cast"):
        torch.cat([x, x], out=torch.empty(0, dtype=torch.int64))


def test_cat_skips_legacy_empty_1d():
    x = t(A)
    same(torch.cat([torch.empty(0, dtype=torch.float64), x], 1), A, torch.float64)
    same(torch.cat([torch.empty(0), torch.empty(0)], 3), np.zeros(0))


def test_cat_errors():
    x = t(A)
    with pytest.raises(ValueError, match="non-empty list"):
        torch.cat([])
    with pytest.raises(RuntimeError, match=r"zero-dimensional tensor \(at position 0\)"):
        torch.cat([torch.tensor(1.0), torch.tensor(2.0)])
    with pytest.raises(
        RuntimeError,
        match="Sizes of tensors must match except in dimension 1. "
        "Expected size 2 but got size 3 for tensor number 1",
    ):
        torch.cat([x, torch.ones(3, 3)], 1)
    with pytest.raises(RuntimeError, match="same number of dimensions: got 2 and 1"):
        torch.cat([x, torch.ones(3)])
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.cat([x, x], 2)


def test_stack_family():
    x = t(A)
    same(torch.stack([x, x], 2), np.stack([A, A], 2))
    same(torch.stack([x, x], -1), np.stack([A, A], -1))
    same(torch.hstack([x, x]), np.hstack([A, A]))
    same(
        torch.vstack([torch.arange(3), torch.arange(3.0)]),
        np.vstack([np.arange(3)] * 2),
        torch.float32,
    )
    same(torch.row_stack([x, x]), np.vstack([A, A]))
    same(torch.dstack([x, x]), np.dstack([A, A]))
    same(
        torch.column_stack([torch.arange(3), torch.ones(3, 2)]),
        np.column_stack([np.arange(3), np.ones((3, 2))]),
    )
    # a 0-d float64 joins after atleast_1d, so it promotes like a dimensioned tensor
    same(
        torch.hstack([torch.tensor([1.0]), torch.tensor(2.0, dtype=torch.float64)]),
        [1.0, 2.0],
        torch.float64,
    )
    with pytest.raises(
        RuntimeError,
        match=r"stack expects each tensor to be equal size, but "
        r"got \[2, 3\] at entry 0 and \[3, 3\] at entry 1",
    ):
        torch.stack([x, torch.ones(3, 3)])
    for fn in (torch.stack, torch.hstack, torch.vstack, torch.dstack, torch.column_stack):
        with pytest.raises(RuntimeError, match="expects a non-empty TensorList"):
            fn([])


def test_atleast():
    assert torch.atleast_1d(torch.tensor(1)).shape == (1,)
    assert torch.atleast_2d(torch.arange(3)).shape == (1, 3)
    assert torch.atleast_3d(torch.arange(3)).shape == (1, 3, 1)
    assert torch.atleast_3d(t(A)).shape == (2, 3, 1)
    a, b = torch.atleast_1d(torch.tensor(1), torch.tensor(2))
    assert a.tolist() == [1] and b.tolist() == [2]
    assert len(torch.atleast_2d([torch.tensor(1), torch.arange(2)])) == 2
    x = t(A)
    v = torch.atleast_3d(x)
    v[0, 0, 0] = 100.0  # a view: writes reach the input
    assert x[0, 0].item() == 100.0


# ---------------------------------------------------------------------------
# Splitting


def test_tensor_split():
    r = torch.arange(10)
    assert [p.tolist() for p in torch.tensor_split(r, [-3, 8, 2, 20])] == [
        list(range(7)),
        [7],
        [],
        list(range(2, 10)),
        [],
    ]
    assert [p.tolist() for p in torch.tensor_split(torch.arange(7), 3)] == [
        [0, 1, 2],
        [3, 4],
        [5, 6],
    ]
    assert [p.tolist() for p in torch.tensor_split(torch.arange(7), torch.tensor(3))] == [
        [0, 1, 2],
        [3, 4],
        [5, 6],
    ]
    assert [p.tolist() for p in torch.arange(7).tensor_split(torch.tensor([1, 5]))] == [
        [0],
        [1, 2, 3, 4],
        [5, 6],
    ]
    x = t(A)
    parts = torch.tensor_split(x, 3, dim=1)
    parts[1].fill_(-1.0)  # views
    assert x[:, 1].tolist() == [-1.0, -1.0]
    with pytest.raises(RuntimeError, match="number of sections must be larger than 0, got 0"):
        torch.tensor_split(x, 0)
    with pytest.raises(RuntimeError, match="at least a 1-dimensional tensor"):
        torch.tensor_split(torch.tensor(1), 2)
    with pytest.raises(RuntimeError, match="to have dtype of long, but got Float"):
        torch.tensor_split(x, torch.tensor(1.5))


def test_directional_splits():
    m = torch.arange(12).reshape(3, 4)
    assert [p.tolist() for p in torch.hsplit(m, 2)] == [
        a.tolist() for a in np.hsplit(np.arange(12).reshape(3, 4), 2)
    ]
    assert [p.shape[0] for p in torch.vsplit(m, [1])] == [1, 2]
    assert [tuple(p.shape) for p in torch.dsplit(torch.arange(8).reshape(1, 2, 4), 2)] == [
        (1, 2, 2),
        (1, 2, 2),
    ]
    with pytest.raises(RuntimeError, match="not divisible by the split_size 3"):
        torch.hsplit(m, 3)
    with pytest.raises(RuntimeError, match="torch.vsplit requires a tensor with at least 2"):
        torch.vsplit(torch.arange(3), 1)
    assert [p.tolist() for p in torch.unsafe_chunk(torch.arange(5), 2)] == [[0, 1, 2], [3, 4]]
    assert [p.tolist() for p in torch.unsafe_split(torch.arange(5), 2)] == [[0, 1], [2, 3], [4]]


# ---------------------------------------------------------------------------
# Repeating and reordering


def test_repeat_and_tile():
    x = t(A)
    same(x.repeat(2, 1, 2), np.tile(A, (2, 1, 2)))
    same(x.repeat((1, 2)), np.tile(A, (1, 2)))
    same(x.tile(2), np.tile(A, 2))
    same(torch.tile(x, (2, 1, 1)), np.tile(A, (2, 1, 1)))
    with pytest.raises(RuntimeError, match="can not be smaller than number of dimensions"):
        x.repeat(2)
    with pytest.raises(RuntimeError, match="negative dimension -2"):
        x.repeat(-1, 2)
    assert not hasattr(torch, "repeat")


def test_repeat_interleave():
    x = t(A)
    same(torch.repeat_interleave(x, t([1, 2]), 0), np.repeat(A, [1, 2], 0))
    same(torch.repeat_interleave(x, 2), np.repeat(A, 2))
    same(x.repeat_interleave(torch.tensor(2), 1, output_size=6), np.repeat(A, 2, 1))
    same(torch.repeat_interleave(t([1, 2, 3])), [0, 1, 1, 2, 2, 2], torch.int64)
    with pytest.raises(RuntimeError, match="repeats can not be negative"):
        torch.repeat_interleave(x, t([1, -1]), 0)
    with pytest.raises(RuntimeError, match="repeats.size\\(0\\) = 3 and input.size\\(0\\) = 2"):
        torch.repeat_interleave(x, t([1, 1, 1]), 0)
    with pytest.raises(RuntimeError, match="allocated size does not match"):
        torch.repeat_interleave(x, t([1, 2]), 0, output_size=5)


def test_flip_roll_rot90():
    x = t(A)
    same(x.flip(0, 1), A[::-1, ::-1])
    same(torch.flip(x, dims=(1,)), A[:, ::-1])
    same(torch.fliplr(x), np.fliplr(A))
    same(torch.flipud(x), np.flipud(A))
    same(torch.roll(x, 1), np.roll(A, 1))
    same(torch.roll(x, (1, -1), (0, 1)), np.roll(A, (1, -1), (0, 1)))
    same(torch.rot90(x), np.rot90(A))
    same(torch.rot90(x, -3, (1, 0)), np.rot90(A, -3, (1, 0)))
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times"):
        x.flip(0, -2)
    with pytest.raises(RuntimeError, match="Input must be >= 2-d."):
        torch.fliplr(torch.arange(3))
    with pytest.raises(RuntimeError, match="shifts and dimensions must align"):
        torch.roll(x, (1, 2), 0)
    with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no dimensions"):
        torch.roll(torch.tensor(3.0), 1, 0)
    with pytest.raises(RuntimeError, match="expected rotation dims to be different"):
        torch.rot90(x, 1, (0, -2))


# ---------------------------------------------------------------------------
# Triangles and diagonals


def test_tril_triu():
    x = t(A)
    same(torch.tril(x), np.tril(A))
    same(torch.triu(x, -1), np.triu(A, -1))
    y = x.clone()
    assert y.triu_(1) is y
    same(y, np.triu(A, 1))
    out = torch.empty(0)
    torch.tril(x, 1, out=out)
    same(out, np.tril(A, 1))
    with pytest.raises(RuntimeError, match="tril: input tensor must have at least 2 dimensions"):
        torch.tril(torch.arange(3))


def test_diag_family():
    x = t(A)
    same(torch.diag(torch.arange(3), 1), np.diag(np.arange(3), 1), torch.int64)
    same(torch.diag(x, -1), np.diag(A, -1))
    same(torch.diagflat(t([1, 2]), 1), np.diagflat([1, 2], 1))
    emb = torch.diag_embed(x, 1)
    assert emb.shape == (2, 4, 4)
    same(emb[1], np.diag(A[1], 1))
    emb = torch.diag_embed(x, -1, 0, 2)
    assert emb.shape == (4, 2, 4)
    same(emb[:, 1, :], np.diag(A[1], -1))
    with pytest.raises(RuntimeError, match="Supports 1D or 2D tensors. Got 3D"):
        torch.diag(torch.ones(2, 2, 2))
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical"):
        torch.diag_embed(x, 0, 1, 1)


def test_block_diag():
    r = torch.block_diag(
        torch.ones(2, 2, dtype=torch.int32),
        torch.tensor(2.5, dtype=torch.float64),
        torch.tensor([True, False]),
    )
    expected = np.zeros((4, 5))
    expected[:2, :2] = 1
    expected[2, 2] = 2.5
    expected[3, 3] = 1
    same(r, expected, torch.float64)
    assert torch.block_diag().shape == (1, 0)
    with pytest.raises(RuntimeError, match="Input 1 has 3 dimensions"):
        torch.block_diag(torch.ones(1), torch.ones(2, 2, 2))


def test_cartesian_prod_and_combinations():
    same(
        torch.cartesian_prod(torch.arange(2), torch.arange(3)),
        [[i, j] for i in range(2) for j in range(3)],
    )
    same(
        torch.combinations(torch.arange(3), 2, True),
        [[0, 0], [0, 1], [0, 2], [1, 1], [1, 2], [2, 2]],
    )
    same(torch.combinations(torch.arange(4.0), 3), [[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]])
    assert torch.combinations(torch.arange(3), 0).shape == (0,)
    assert torch.combinations(torch.arange(3), 4).shape == (0, 4)
    with pytest.raises(RuntimeError, match="meshgrid expects all tensors to have the same dtype"):
        torch.cartesian_prod(torch.arange(2), torch.ones(2))
    with pytest.raises(RuntimeError, match=r"Expect a 1D vector, but got shape \[2, 3\]"):
        torch.combinations(t(A))


# ---------------------------------------------------------------------------
# Broadcasting, flattening, resizing


def test_broadcast_tensors_and_ravel():
    x = t(A)
    a, b = torch.broadcast_tensors(x, torch.ones(3, 1, 1))
    assert a.shape == b.shape == (3, 2, 3)
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        torch.broadcast_tensors(x, torch.ones(4))
    same(x.t().ravel(), A.T.ravel())
    r = torch.ravel(x)
    r[0] = 7.0  # contiguous input: a view
    assert x[0, 0].item() == 7.0


def test_resize():
    y = torch.arange(6)
    v0 = y._version
    assert y.resize_(2, 2) is y
    same(y, [[0, 1], [2, 3]])
    assert y._version > v0
    y.resize_(5)
    same(y[:4], [0, 1, 2, 3])
    z = torch.zeros(3)
    torch.resize_as_(z, torch.ones(2, 3))
    assert z.shape == (2, 3)
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        torch.ones(2, requires_grad=True).resize_(3)


def test_sum_to_size():
    x = t(A)
    same(x.sum_to_size(1, 3), A.sum(0, keepdims=True))
    same(x.sum_to_size(3), A.sum(0))
    same(x.sum_to_size((2, 1)), A.sum(1, keepdims=True))
    assert torch.ones(2, dtype=torch.bool).sum_to_size(1).dtype == torch.int64
    with pytest.raises(
        RuntimeError,
        match=r"size \{\[3, 2\]\} is not expandable to size "
        r"\{\[2, 3\]\}",
    ):
        x.sum_to_size(3, 2)


def test_unravel_index():
    r = torch.unravel_index(t([-1, 7, 4]), (2, 3))
    same(r[0], [1, 0, 1], torch.int64)
    same(r[1], [2, 1, 1], torch.int64)
    (only,) = torch.unravel_index(t([3]), 4)
    same(only, [3])
    with pytest.raises(TypeError, match="integer dtype"):
        torch.unravel_index(torch.tensor(1.0), (2, 3))
    with pytest.raises(ValueError, match="cannot have negative values"):
        torch.unravel_index(torch.tensor(1), (2, -3))


# ---------------------------------------------------------------------------
# *_copy variants


def test_copy_variants_are_copies():
    x = t(A)
    d = torch.diagonal_copy(x)
    same(d, np.diagonal(A))
    d.fill_(-1.0)
    same(x, A)  # not a view
    same(torch.permute_copy(x, (1, 0)), A.T)
    same(torch.transpose_copy(x, 0, 1), A.T)
    same(torch.t_copy(x), A.T)
    same(torch.view_copy(x, (3, 2)), A.reshape(3, 2))
    same(x.narrow_copy(1, 0, 2), A[:, :2])
    same(torch.slice_copy(x, 1, 0, None, 2), A[:, ::2])
    same(torch.expand_copy(x[:1], (3, 3)), np.broadcast_to(A[:1], (3, 3)))
    same(torch.squeeze_copy(x[None]), A)
    assert torch.unsqueeze_copy(x, 0).shape == (1, 2, 3)
    same(torch.unfold_copy(torch.arange(5.0), 0, 2, 1), [[0, 1], [1, 2], [2, 3], [3, 4]])
    same(torch.as_strided_copy(x, (2, 2), (1, 2)), [[0, 2], [1, 3]])
    same(torch.select_copy(x, 1, 1), A[:, 1])
    assert [p.tolist() for p in torch.unbind_copy(x)] == A.tolist()
    parts = torch.split_with_sizes_copy(x, [1, 2], 1)
    same(parts[1], A[:, 1:])
    outs = [torch.empty(0), torch.empty(0)]
    torch.split_copy(x, 2, 1, out=outs)
    same(outs[1], A[:, 2:])


def test_copy_variants_do_not_share_storage():
    x = torch.arange(6.0).reshape(3, 2)
    d = torch.detach_copy(x)
    d.zero_()
    assert x.sum().item() == 15
    c = torch.view_as_complex_copy(x)
    assert c.tolist() == [1j, 2 + 3j, 4 + 5j]
    r = torch.view_as_real_copy(c)
    r.zero_()
    assert c.tolist() == [1j, 2 + 3j, 4 + 5j] and r.shape == (3, 2)
    a, b = torch.unsafe_split_with_sizes(torch.arange(5), [2, 3])
    assert a.tolist() == [0, 1] and b.tolist() == [2, 3, 4]


# ---------------------------------------------------------------------------
# _chunk_cat


def test_chunk_cat_values_out_and_errors():
    a = torch.arange(6.0).reshape(2, 3)
    b = torch.arange(4.0).reshape(2, 2)
    # chunk i of each tensor (zero-padded to 2 chunks along dim 1) goes into row i
    expected = [[[0, 1, 0], [2, 0, 1]], [[3, 4, 2], [5, 0, 3]]]
    same(torch._chunk_cat([a, b], 1, 2), expected, torch.float32)
    out = torch.empty(0)
    torch._chunk_cat([a, b], 1, 2, out=out)
    same(out, expected)
    same(torch._chunk_cat([torch.arange(5.0)], 0, 2), [[0, 1, 2], [3, 4, 0]])
    with pytest.raises(RuntimeError, match="expects non-negative dim"):
        torch._chunk_cat([torch.zeros(2, 3), torch.zeros(4)], -1, 3)
    with pytest.raises(RuntimeError, match="expects positive num_chunks"):
        torch._chunk_cat([a], 0, 0)
    with pytest.raises(RuntimeError, match="non-empty input tensor list"):
        torch._chunk_cat([], 0, 1)
    with pytest.raises(RuntimeError, match="same dtype"):
        torch._chunk_cat([a, b.double()], 1, 2)
