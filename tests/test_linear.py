"""`F.linear` and `F.bilinear` (`jtorch/_ops/nn/linear.py`), checked with numpy."""

import numpy as np
import pytest

import jtorch as torch
import jtorch.nn.functional as F
from tests.helpers import close
from tests.helpers import f32 as t

RNG = np.random.default_rng(0)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_linear_and_bilinear():
    x, w, b = rand(2, 3), rand(4, 3), rand(4)
    close(F.linear(t(x), t(w), t(b)), x @ w.T + b)
    close(F.linear(t(x), t(w)), x @ w.T)
    close(F.linear(t(x), t(w[0])), x @ w[0])
    i = F.linear(t([[1, 2]], np.int64), t([[3, 4]], np.int64))
    assert i.dtype == torch.int64 and i.tolist() == [[11]]
    with pytest.raises(
        RuntimeError,
        match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and "
        r"2x4\)",
    ):
        F.linear(t(x), t(rand(4, 2)))
    with pytest.raises(RuntimeError, match="same dtype"):
        F.linear(t(x), torch.from_numpy(w.astype(np.float64)))
    x2, wb = rand(2, 5), rand(4, 3, 5)
    close(
        F.bilinear(t(x), t(x2), t(wb), t(b)), np.einsum("bi,oij,bj->bo", x, wb, x2) + b, rtol=1e-4
    )
    with pytest.raises(RuntimeError, match="input2 size does not match weight size"):
        F.bilinear(t(x), t(x), t(wb))
