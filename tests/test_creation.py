"""Creation ops (`jtorch/_ops/creation.py`): `empty_permuted`."""

import pytest

import jtorch as torch


def test_empty_permuted_shape_strides_and_errors():
    x = torch.empty_permuted((2, 3, 4), (2, 0, 1), dtype=torch.float64)
    assert x.shape == (2, 3, 4) and x.dtype is torch.float64
    assert x.stride() == (3, 1, 6)  # dim 2 outermost in memory, then 0, then 1
    assert torch.empty_permuted((), ()).shape == ()
    with pytest.raises(RuntimeError, match="does not match the length of the physical_layout"):
        torch.empty_permuted((2,), (0, 1))
    with pytest.raises(RuntimeError, match="Dimension out of range"):
        torch.empty_permuted((2,), (3,))
    with pytest.raises(RuntimeError, match="Duplicate dim not allowed"):
        torch.empty_permuted((2, 3), (0, 0))
