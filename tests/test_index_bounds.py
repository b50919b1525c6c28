"""Indices out of range raise PyTorch's errors and leave the tensor as it was.

jax clips a gather index and drops a scatter index that is out of range; PyTorch raises.
Expected errors are PyTorch's (checked against it in compat/test_index_bounds.py).
"""

import pytest

import jtorch


def _x():
    return jtorch.arange(5.0)


@pytest.mark.parametrize("index, bad", [([1, 10], 10), ([1, -6], -6), ([7], 7)])
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_out_of_range_raises_and_leaves_tensor_unchanged(index, bad, accumulate):
    x = _x()
    with pytest.raises(
        IndexError, match=f"index {bad} is out of bounds for dimension 0 with size 5"
    ):
        x.index_put_((jtorch.tensor(index),), jtorch.ones(len(index)), accumulate=accumulate)
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    with pytest.raises(IndexError, match="out of bounds"):
        jtorch.index_put(x, (jtorch.tensor(index),), jtorch.ones(len(index)))


def test_index_put_checks_every_dimension_and_mask_shapes():
    m = jtorch.arange(12.0).reshape(3, 4)
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 1 with size 4"):
        m.index_put_((jtorch.tensor([0]), jtorch.tensor([4])), jtorch.ones(1))
    with pytest.raises(
        IndexError,
        match="The shape of the mask \\[2\\] at index 0 does not "
        "match the shape of the indexed tensor \\[5\\]",
    ):
        _x().index_put_((jtorch.tensor([True, False]),), jtorch.ones(1))
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 1"):
        _x().index_put_((jtorch.tensor([0]), jtorch.tensor([0])), jtorch.ones(1))
    assert m.tolist() == jtorch.arange(12.0).reshape(3, 4).tolist()


def test_index_put_in_range_still_writes():
    x = _x().index_put_((jtorch.tensor([-1, 0]),), jtorch.tensor([9.0, 8.0]))
    assert x.tolist() == [8.0, 1.0, 2.0, 3.0, 9.0]
    x = _x().index_put_((jtorch.tensor([1, 1]),), jtorch.tensor([1.0, 2.0]), accumulate=True)
    assert x.tolist() == [0.0, 4.0, 2.0, 3.0, 4.0]
    x = _x().index_put_((jtorch.tensor(True),), jtorch.tensor(5.0))
    assert x.tolist() == [5.0] * 5
    x = _x().index_put_((jtorch.tensor(False),), jtorch.tensor(5.0))
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_setitem_and_index_add_out_of_range():
    x = _x()
    with pytest.raises(IndexError, match="index 10 is out of bounds"):
        x[jtorch.tensor([1, 10])] = 1.0
    with pytest.raises(IndexError, match="index out of range in self"):  # 1-d self
        x.index_add_(0, jtorch.tensor([1, 10]), jtorch.ones(2))
    with pytest.raises(IndexError, match="index out of range in self"):  # no wrapping
        x.index_add_(0, jtorch.tensor([-1]), jtorch.ones(1))
    m = jtorch.zeros(3, 4)
    with pytest.raises(RuntimeError, match="index 4 is out of bounds for dimension 1"):
        m.index_add_(1, jtorch.tensor([4]), jtorch.ones(3, 1))
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0] and m.sum().item() == 0.0
