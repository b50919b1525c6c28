"""In-place view ops, set_/storage, `.grad` assignment and small Tensor methods.

Expected values come from the definitions (PyTorch's documented semantics): an in-place
view op changes the tensor's own shape/strides over the same storage; gradients of
transposes and selections are the transposed/scattered upstream gradients.
"""

import warnings

import numpy as np
import pytest

import jtorch as torch


def grid(*shape):
    """Values 0, 1, 2, ... in a fresh (root) float32 tensor."""
    return torch.zeros(*shape).add_(torch.arange(float(np.prod(shape))).reshape(shape))


# ---------------------------------------------------------------------------
# In-place view ops


def test_t_transpose_swap_change_layout_in_place_and_share_storage():
    x = grid(2, 3)
    before = x[0]  # a view made before: unaffected
    version = x._version
    assert x.t_() is x and x._version == version + 1
    assert tuple(x.shape) == (3, 2) and x.stride() == (1, 3) and x._base is None
    x.mul_(2)  # writes reach the shared storage
    assert before.tolist() == [0, 2, 4]
    assert x.transpose_(0, 1).shape == (2, 3) and x.is_contiguous()
    assert x.swapaxes_(0, 1).stride() == (1, 3) and x.swapdims_(1, 0).stride() == (3, 1)
    assert x._version == version + 5 and not x._chain  # its storage's layout: a plain root


def test_squeeze_unsqueeze_as_strided_in_place():
    x = torch.zeros(1, 2, 1)
    assert x.squeeze_(-1).shape == (1, 2) and x.squeeze_((0,)).shape == (2,)
    assert x.unsqueeze_(1).shape == (2, 1) and x.stride() == (1, 1)
    assert x.squeeze_().shape == (2,)
    y = grid(2, 3)
    assert y.as_strided_((2, 2), (1, 2), 1).tolist() == [[1, 3], [2, 4]]
    assert y.storage_offset() == 1 and y.stride() == (1, 2)
    s = torch.tensor(3.0)
    assert s.t_().shape == () and s.unsqueeze_(0).shape == (1,)


def test_in_place_view_errors_leave_tensor_unchanged():
    z = torch.zeros(2, 3, 4)
    with pytest.raises(RuntimeError, match=r"t_\(\) expects a tensor with <= 2 dimensions"):
        z.t_()
    with pytest.raises(IndexError, match=r"range of \[-3, 2\], but got 3"):
        z.transpose_(0, 3)
    with pytest.raises(IndexError, match=r"range of \[-4, 3\], but got -5"):
        z.unsqueeze_(-5)
    with pytest.raises(IndexError):
        z.squeeze_((0, 5))
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        z.as_strided_((100,), (1,))
    assert z.shape == (2, 3, 4) and z._version == 0


def test_in_place_view_autograd():
    a = torch.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        a.t_()
    with pytest.raises(RuntimeError, match="a view of a leaf Variable"):
        a[0].unsqueeze_(0)
    b = a * 1
    assert b.t_().grad_fn.name() == "TBackward1"
    names = [
        f().grad_fn.name()
        for f in (
            b.unsqueeze_(0).squeeze_,
            lambda: b.unsqueeze_(2).squeeze_(2),
            lambda: b.unsqueeze_(0).squeeze_((0,)),
            lambda: b.transpose_(0, 1),
            lambda: b.as_strided_((3, 2), (1, 3)),
        )
    ]
    assert names == [
        "SqueezeBackward3",
        "SqueezeBackward4",
        "SqueezeBackward5",
        "TransposeBackward1",
        "AsStridedBackward1",
    ]
    (b * torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).sum().backward()
    assert a.grad.tolist() == [[1, 3, 5], [2, 4, 6]]  # the transpose of the weights


def test_restrided_root_then_views_written_in_place():
    a = torch.ones(2, 3, requires_grad=True)
    c = a * 1
    old = c[1]  # made before c.t_(): indexes the storage
    c.t_()
    c[0].mul_(10)  # column 0 of the original layout
    old.mul_(2)  # row 1 of the original layout
    (c.sum() + old.sum()).backward()
    # d/da of c.sum(): 10 in column 0 and 1 elsewhere, doubled on row 1; old.sum() adds the
    # same row-1 factors again.
    assert a.grad.tolist() == [[10, 1, 1], [40, 4, 4]]


def test_as_strided_of_a_view_differentiates_through_the_storage():
    a = torch.ones(4, requires_grad=True)
    b = (a * 1)[1:]
    c = b.as_strided((2,), (1,), 1)  # storage elements 1 and 2 = b[0], b[1]
    (c * torch.tensor([1.0, 10.0])).sum().backward()
    assert a.grad.tolist() == [0, 1, 10, 0]


def test_resize_keeps_storage_and_offset():
    x = torch.zeros(2, 3)
    row = x[0]
    x.resize_(4)
    x.fill_(1)
    assert row.tolist() == [1, 1, 1] and x.shape == (4,)
    y = torch.zeros(6)[2:]
    assert y.resize_(2, 2).storage_offset() == 2 and y.stride() == (2, 1)


# ---------------------------------------------------------------------------
# .grad


def test_grad_assignment_is_checked():
    a = torch.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"gradient of size '\[3, 2\]' to a tensor of size"):
        a.grad = torch.ones(3, 2)
    with pytest.raises(RuntimeError, match="dtype 'double' to a tensor with grad_dtype 'Float'"):
        a.grad = torch.ones(2, 3, dtype=torch.float64)
    with pytest.raises(TypeError, match="expected to be a Tensor or None but got grad of type int"):
        a.grad = 3
    with pytest.raises(RuntimeError, match="can't assign Variable as its own grad"):
        a.grad = a
    assert a.grad is None
    a.grad_dtype = None  # any dtype allowed from now on
    a.grad = torch.ones(2, 3, dtype=torch.float64)
    assert a.grad.dtype == torch.float64
    with pytest.raises(RuntimeError, match="grad_dtype can only be accessed on leaf"):
        _ = (a * 2).grad_dtype


def test_non_leaf_grad_read_warns_except_when_retained():
    a = torch.ones(2, requires_grad=True)
    b = a * 2
    with pytest.warns(UserWarning, match="not a leaf Tensor is being accessed"):
        assert b.grad is None
    c = a * 3
    c.retain_grad()
    b.grad = torch.ones(2)  # assigning to a non-leaf is allowed
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert c.grad is None and b.grad is not None and a.grad is None
        (c.sum() + b.sum()).backward()
        assert c.grad.tolist() == [1, 1] and a.grad.tolist() == [5, 5]
        opt = torch.optim.SGD([a], lr=0.5)
        torch.nn.utils.clip_grad_norm_([a], 1.0)
        opt.step()


# ---------------------------------------------------------------------------
# set_ and storages


def test_set_shares_storage_and_layout():
    w = torch.arange(3.0)
    t = torch.zeros(5)
    assert t.set_(w) is t and t.is_set_to(w) and t._version == 1
    t.fill_(4)
    assert w.tolist() == [4, 4, 4]
    u = torch.zeros(1).set_(w, 1, (2,), (1,))
    u[0] = 7
    assert w.tolist() == [4, 7, 4] and u.tolist() == [7, 4]
    assert torch.zeros(1).set_().shape == (0,)
    with pytest.raises(
        RuntimeError, match="Could not set tensor of type float to a tensor of type double"
    ):
        torch.zeros(1, dtype=torch.float64).set_(w)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        torch.zeros(1, requires_grad=True).set_(w)


def test_storage_views_the_elements():
    w = torch.arange(3.0)
    with (
        pytest.warns(UserWarning, match="TypedStorage is deprecated")
        if not torch._storage._warned[0]
        else warnings.catch_warnings()
    ):
        s = w.storage()
    assert (s.size(), len(s), s.dtype, s.tolist(), s[1]) == (3, 3, torch.float32, [0, 1, 2], 1)
    assert s.nbytes() == 12 and s.element_size() == 4
    assert w[1:].storage().data_ptr() == s.data_ptr() == w.data_ptr()
    assert w.storage_type().__name__ == "FloatStorage"
    assert w.untyped_storage().size() == 12
    s[0] = 7
    assert w.tolist() == [7, 1, 2]
    v = torch.zeros(1).set_(s, 1, (2,))
    assert v.tolist() == [1, 2]
    assert repr(s).endswith(
        "[torch.storage.TypedStorage(dtype=torch.float32, device=cpu) of size 3]"
    )


# ---------------------------------------------------------------------------
# fill_diagonal_ and Python callbacks


def test_fill_diagonal_wraps_tall_matrices():
    x = torch.zeros(7, 3).fill_diagonal_(5, wrap=True)
    rows, cols = np.nonzero(np.asarray(x))
    assert list(zip(rows, cols)) == [(0, 0), (1, 1), (2, 2), (4, 0), (5, 1), (6, 2)]
    assert torch.zeros(7, 3).fill_diagonal_(5).sum().item() == 15
    assert torch.zeros(2, 2, 2).fill_diagonal_(1).tolist() == [[[1, 0], [0, 0]], [[0, 0], [0, 1]]]
    with pytest.raises(RuntimeError, match="all dimensions of input must be of equal length"):
        torch.zeros(2, 3, 2).fill_diagonal_(1)
    a = torch.ones(2, 2, requires_grad=True)
    b = a * 2
    b.fill_diagonal_(0)
    b.sum().backward()
    assert a.grad.tolist() == [[0, 2], [2, 0]]


def test_apply_map_map2():
    x = torch.arange(4).apply_(lambda v: v * 1.7)
    assert x.tolist() == [0, 1, 3, 5] and x.dtype == torch.int64  # truncated, as PyTorch
    y = torch.ones(2, 3).map_(torch.tensor([1.0, 2.0, 3.0]), lambda a, b: a + b)
    assert y.tolist() == [[2, 3, 4], [2, 3, 4]]
    z = torch.ones(2, 2).map2_(
        torch.full((2, 2), 2.0), torch.full((2, 1), 3.0), lambda a, b, c: a + b * c
    )
    assert z.tolist() == [[7, 7], [7, 7]]
    with pytest.raises(RuntimeError, match=r"Can't call apply_\(\) on Variable that requires"):
        torch.ones(2, requires_grad=True).apply_(lambda v: v)
    with pytest.raises(TypeError, match="must be real number, not str"):
        torch.ones(2).apply_(lambda v: "a")
    with pytest.raises(
        TypeError,
        match=r"map_: expected torch.FloatTensor for 'other' \(got "
        r"torch.DoubleTensor\)",
    ):
        torch.ones(2).map_(torch.ones(2, dtype=torch.float64), lambda a, b: a)


# ---------------------------------------------------------------------------
# Predicates and small methods


def test_predicates():
    with pytest.raises(RuntimeError, match="with no values is ambiguous"):
        torch.tensor([]).is_nonzero()
    with pytest.raises(RuntimeError, match="more than one value is ambiguous"):
        torch.tensor([1, 2]).is_nonzero()
    assert torch.tensor([0.0]).is_nonzero() is False and torch.tensor(2).is_nonzero() is True
    assert torch.ones(2, 3).is_same_size(torch.zeros(2, 3))
    assert not torch.ones(2, 3).is_same_size(torch.zeros(3, 2))
    with torch.inference_mode():
        inf = torch.ones(3)
    assert inf.is_inference() and inf[1:].is_inference()
    assert not torch.ones(2).is_inference() and not (inf + 1).is_inference()
    x = torch.ones(2)
    assert not x.is_pinned() and not x.is_shared()
    assert x.share_memory_() is x and x.is_shared() and x[1:].is_shared()
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
            x.pin_memory()
    assert x.record_stream(torch.cuda.Stream()) is None
    assert x.to_dense() is x
    assert not (x.is_xla or x.is_xpu or x.is_mps or x.is_mtia or x.is_sparse_csr)


def test_new_dim_order_as_subclass_reversed():
    x = torch.ones(2, dtype=torch.int32)
    assert x.new(2, 3).shape == (2, 3) and x.new(2, 3).dtype == torch.int32
    assert x.new([1.5, 2]).tolist() == [1, 2] and x.new().shape == (0,)
    assert x.new(torch.Size([4])).shape == (4,)
    src = torch.zeros(2, dtype=torch.int32)
    alias = x.new(src)
    alias.fill_(3)
    assert src.tolist() == [3, 3]
    with pytest.raises(TypeError, match="data must be a sequence"):
        x.new(2.5)
    z = torch.zeros(2, 3, 4)
    assert z.dim_order() == (0, 1, 2) and z.permute(2, 0, 1).dim_order() == (1, 2, 0)
    assert torch.zeros(2, 3).t().dim_order() == (1, 0)

    class Sub(torch.Tensor):
        pass

    y = torch.arange(3.0).as_subclass(Sub)
    assert type(y) is Sub and y.tolist() == [0, 1, 2]
    with pytest.raises(TypeError, match="does not inherit from Tensor"):
        x.as_subclass(int)
    assert [v.item() for v in reversed(torch.arange(3))] == [2, 1, 0]
    assert reversed(torch.arange(4).reshape(2, 2)).tolist() == [[2, 3], [0, 1]]
