"""`cosine_similarity`, `pairwise_distance`, `pdist` (`jtorch/_ops/nn/distance.py`), checked
with numpy."""

import math

import numpy as np
import pytest

import jtorch as torch
import jtorch.nn.functional as F
from tests.helpers import close
from tests.helpers import f32 as t

RNG = np.random.default_rng(0)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_distances():
    a, b = rand(3, 4), rand(3, 4)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    cos = (a64 * b64).sum(1) / np.linalg.norm(a64, axis=1) / np.linalg.norm(b64, axis=1)
    close(F.cosine_similarity(t(a), t(b)), cos)
    close(
        torch.cosine_similarity(t(a), t(b[:1]), dim=1),
        (a64 * b64[:1]).sum(1) / np.linalg.norm(a64, axis=1) / np.linalg.norm(b64[0]),
    )
    close(F.pairwise_distance(t(a), t(b)), np.linalg.norm(a64 - b64 + 1e-6, axis=1))
    close(
        F.pairwise_distance(t(a), t(b), p=1.0, keepdim=True),
        np.abs(a64 - b64 + 1e-6).sum(1, keepdims=True),
    )
    pairs = [(0, 1), (0, 2), (1, 2)]
    close(F.pdist(t(a)), [np.linalg.norm(a64[i] - a64[j]) for i, j in pairs])
    close(torch.pdist(t(a), p=math.inf), [np.abs(a64[i] - a64[j]).max() for i, j in pairs])
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 1D"):
        F.pdist(t(a[0]))
    with pytest.raises(RuntimeError, match="expected common dtype to be floating point"):
        F.cosine_similarity(t([1, 2], np.int64), t([1, 2], np.int64), 0)
