"""Views share storage (DESIGN 2); strides and errors as PyTorch documents them."""

import numpy as np
import pytest

import jtorch as torch


def arange(*shape):
    return torch.arange(int(np.prod(shape)), dtype=torch.float32).reshape(shape)


def test_write_through_select_slice_and_transpose():
    x = arange(3, 4)
    x[0] = 1
    assert x[0].tolist() == [1, 1, 1, 1]
    x.view(-1).add_(1)
    assert x[1].tolist() == [5, 6, 7, 8]
    x.t().mul_(2)
    assert x[2].tolist() == [18, 20, 22, 24]
    y = x.detach()
    y.zero_()
    assert x.sum().item() == 0


def test_other_views_see_writes():
    x = arange(2, 3)
    col = x[:, 1]
    row = x[1]
    row.fill_(-1)
    assert col.tolist() == [1, -1]
    x.add_(100)
    assert col.tolist() == [101, 99]


@pytest.mark.parametrize(
    "make",
    [
        lambda x: x.narrow(1, 1, 2),
        lambda x: x.diagonal(),
        lambda x: x.unsqueeze(0),
        lambda x: x.permute(1, 0),
        lambda x: x[::2, 1:],
        lambda x: x.unbind(0)[1],
        lambda x: x.split(1, dim=1)[2],
        lambda x: x.chunk(2, dim=0)[0],
        lambda x: x.movedim(0, 1),
        lambda x: x.flatten(),
        lambda x: x.unflatten(1, (3, 1)),
        lambda x: x.as_strided((2,), (4,), 1),
        lambda x: x.squeeze(),
        lambda x: x.select(1, 2),
        lambda x: x.view(3, 3).T,
    ],
)
def test_every_view_writes_to_base(make):
    base = arange(3, 3)
    expected = np.arange(9, dtype=np.float32).reshape(3, 3)
    v = make(base)
    v.add_(1000)
    # the same positions changed in numpy's model of the same view
    ref = make(_NumpyView(expected))
    ref.add_(1000)
    assert base.tolist() == expected.tolist()


class _NumpyView:
    """A numpy twin of the view ops used above (numpy views are real views)."""

    def __init__(self, a):
        self.a = a

    def narrow(self, d, s, n):
        return _NumpyView(np.moveaxis(np.moveaxis(self.a, d, 0)[s : s + n], 0, d))

    def diagonal(self):
        idx = np.arange(min(self.a.shape))
        return _Fancy(self.a, (idx, idx))

    def unsqueeze(self, d):
        return _NumpyView(np.expand_dims(self.a, d))

    def permute(self, *p):
        return _NumpyView(self.a.transpose(p))

    def movedim(self, s, d):
        return _NumpyView(np.moveaxis(self.a, s, d))

    def __getitem__(self, i):
        return _NumpyView(self.a[i])

    def unbind(self, d):
        return [
            _NumpyView(np.take(self.a, i, axis=d) if d else self.a[i])
            for i in range(self.a.shape[d])
        ]

    def split(self, n, dim):
        return [_NumpyView(self.a[:, i : i + n]) for i in range(0, self.a.shape[1], n)]

    def chunk(self, n, dim):
        return [_NumpyView(self.a[:2])]

    def flatten(self):
        return _NumpyView(self.a.reshape(-1))

    def unflatten(self, d, s):
        return _NumpyView(self.a.reshape(3, 3, 1))

    def as_strided(self, size, stride, offset):
        return _Fancy(self.a.reshape(-1), (offset + np.arange(size[0]) * stride[0],))

    def squeeze(self):
        return _NumpyView(self.a.squeeze())

    def select(self, d, i):
        return _NumpyView(self.a[:, i])

    def view(self, *s):
        return _NumpyView(self.a.reshape(s))

    @property
    def T(self):
        return _NumpyView(self.a.T)

    def add_(self, v):
        self.a += v


class _Fancy:
    def __init__(self, a, idx):
        self.a, self.idx = a, idx

    def add_(self, v):
        self.a[self.idx] += v


def test_strides_and_contiguity():
    x = arange(2, 3, 4)
    assert x.stride() == (12, 4, 1) and x.is_contiguous()
    t = x.transpose(0, 2)
    assert t.stride() == (1, 4, 12) and not t.is_contiguous()
    assert t.contiguous().is_contiguous() and t.contiguous().stride() == (6, 2, 1)
    s = x[:, 1:, ::2]
    assert s.stride() == (12, 4, 2) and s.storage_offset() == 4
    assert x.expand(5, 2, 3, 4).stride() == (0, 12, 4, 1)
    assert x.unsqueeze(1).stride() == (12, 12, 4, 1)
    assert x.diagonal(0, 1, 2).stride() == (12, 5)


def test_view_on_incompatible_layout_raises():
    t = arange(2, 3).t()
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        t.view(6)
    r = t.reshape(6)  # reshape copies instead
    assert r.tolist() == [0, 3, 1, 4, 2, 5]
    r.add_(1)
    assert t.tolist() == [[0, 3], [1, 4], [2, 5]]


def test_view_shape_errors():
    x = arange(2, 3)
    with pytest.raises(RuntimeError, match=r"shape '\[4, -1\]' is invalid for input of size 6"):
        x.view(4, -1)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        x.view(-1, -1)


def test_shared_storage_and_version():
    x = torch.arange(4.0)
    v = x[1:]
    assert v.data_ptr() == x.data_ptr() + 4
    assert v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert v._base is x
    before = x._version
    v.add_(1)
    assert x._version == before + 1 == v._version


def test_expanded_write_raises():
    x = torch.zeros(3)
    e = x.expand(2, 3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        e.add_(1)
    assert x.tolist() == [0, 0, 0]


def test_view_as_real_and_complex():
    z = torch.tensor([1 + 2j, 3 - 1j])
    r = torch.view_as_real(z)
    assert r.tolist() == [[1, 2], [3, -1]] and r.stride() == (2, 1)
    r[0, 1] = 5
    assert z.tolist() == [1 + 5j, 3 - 1j]
    c = torch.view_as_complex(r)
    c.mul_(2)
    assert z.tolist() == [2 + 10j, 6 - 2j]
    z.imag.zero_()
    assert z.tolist() == [2, 6]


def test_data_and_parameter_like_sharing():
    x = arange(3)
    d = x.data
    d.add_(1)
    assert x.tolist() == [1, 2, 3]
    x.data = torch.zeros(2)
    assert x.tolist() == [0, 0]


@pytest.mark.parametrize("dtype", ["bfloat16", "float8_e5m2", "float16", "complex64", "bool"])
def test_strided_views_of_every_dtype_read_their_elements(dtype):
    # (the first sightings of a view's shape are copied out on the host: numpy must stride
    # ml_dtypes' bfloat16/float8 too)
    dt = getattr(torch, dtype)
    v = torch.arange(12.0).reshape(3, 4).to(dt)
    got = v[1:, ::2].t().to(torch.float32)
    expected = [[1.0, 1.0], [1.0, 1.0]] if dtype == "bool" else [[4.0, 8.0], [6.0, 10.0]]
    assert got.tolist() == expected


def test_H_is_a_matrix_property():
    m = torch.arange(6.0).reshape(2, 3).requires_grad_()
    h = m.H
    assert h.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    assert h.grad_fn.name() == "TransposeBackward0"  # PyTorch's matrix_H: transpose(-2, -1)
    s = torch.tensor(2.0)
    with pytest.warns(UserWarning, match="deprecated on 0-D"):
        assert s.H is s
    for bad in (torch.zeros(3), torch.zeros(2, 2, 2)):
        with pytest.raises(RuntimeError, match="only supported on matrices"):
            _ = bad.H


def test_writes_through_stepped_slices():
    # a view with gaps between its elements overlaps nothing: it is written through
    v = torch.arange(35.0).reshape(5, 7)
    v[1:4, ::2] = v[1:4, ::2] * 2
    expected = np.arange(35.0).reshape(5, 7)
    expected[1:4, ::2] *= 2
    np.testing.assert_array_equal(v.numpy(), expected)
    w = torch.zeros(6)
    w[::2] += 1
    np.testing.assert_array_equal(w.numpy(), [1, 0, 1, 0, 1, 0])
    # an expanded tensor (stride 0) is refused, as in PyTorch
    with pytest.raises(RuntimeError, match="single memory location"):
        torch.zeros(3).expand(2, 3).add_(1)


def test_layout_predicates():
    from jtorch import _views

    assert _views.has_internal_overlap((2, 3), (0, 1))  # expanded
    assert not _views.has_internal_overlap((3, 4), (7, 2))  # stepped: gaps, no sharing
    assert not _views.has_internal_overlap((1, 3), (0, 1))  # a size-1 dim's stride is moot
    # dense and non-overlapping: some order of the dims is a contiguous layout
    assert _views.non_overlapping_and_dense((3, 4), (1, 3))  # transposed
    assert _views.non_overlapping_and_dense((3, 1, 4), (4, 99, 1))  # size-1 dim aside
    assert not _views.non_overlapping_and_dense((3,), (2,))  # gaps
    assert not _views.non_overlapping_and_dense((2, 3), (0, 1))  # overlap
