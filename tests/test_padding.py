"""`F.pad` (`jtorch/_ops/nn/padding.py`), checked with numpy."""

import numpy as np
import pytest

import jtorch as torch
import jtorch.nn.functional as F
from tests.helpers import close
from tests.helpers import f32 as t

RNG = np.random.default_rng(0)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_pad():
    x = np.arange(10, dtype=np.float32).reshape(1, 2, 5)
    close(F.pad(t(x), (1, 2)), np.pad(x, ((0, 0), (0, 0), (1, 2))))
    close(
        F.pad(t(x), (1, 0, 0, 1), value=-1.0),
        np.pad(x, ((0, 0), (0, 1), (1, 0)), constant_values=-1),
    )
    close(F.pad(t(x), (-1, -2)), x[..., 1:-2])
    close(
        torch.constant_pad_nd(t(x), (2, 0), 7.0),
        np.pad(x, ((0, 0), (0, 0), (2, 0)), constant_values=7),
    )
    close(F.pad(t(x), (2, 3), mode="reflect"), np.pad(x, ((0, 0), (0, 0), (2, 3)), "reflect"))
    close(F.pad(t(x), (2, 3), mode="replicate"), np.pad(x, ((0, 0), (0, 0), (2, 3)), "edge"))
    close(F.pad(t(x), (2, 3), mode="circular"), np.pad(x, ((0, 0), (0, 0), (2, 3)), "wrap"))
    close(F.pad(t(x), (1, 1, 1, 0), mode="reflect"), np.pad(x, ((0, 0), (1, 0), (1, 1)), "reflect"))
    # Negative circular pads crop first, then wrap the cropped range.
    close(
        F.pad(t(x), (-1, 2), mode="circular"), np.pad(x[..., 1:], ((0, 0), (0, 0), (0, 2)), "wrap")
    )
    assert F.pad(t(x, np.int64), (1, 1)).dtype == torch.int64
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(t(x), (1,))
    with pytest.raises(
        RuntimeError, match="Padding size should be less than the corresponding input dimension"
    ):
        F.pad(t(x), (5, 5), mode="reflect")
    with pytest.raises(NotImplementedError, match="Padding size 2 is not supported for 1D input"):
        F.pad(t([1.0, 2.0]), (1, 1), mode="replicate")
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode foo"):
        F.pad(t(x), (1, 1), mode="foo")
