"""Matrix products (`jtorch/_ops/matmul.py`): values against numpy, dtypes and PyTorch's errors."""

import functools
import warnings

import numpy as np
import pytest

import jtorch as torch

from . import helpers
from .helpers import from_np as t

close = functools.partial(helpers.close, rtol=1e-5, atol=1e-5)

RNG = np.random.default_rng(0)
A23 = RNG.standard_normal((2, 3)).astype(np.float32)
B34 = RNG.standard_normal((3, 4)).astype(np.float32)
V3 = RNG.standard_normal(3).astype(np.float32)
BA = RNG.standard_normal((2, 2, 3)).astype(np.float32)
BB = RNG.standard_normal((2, 3, 4)).astype(np.float32)


def test_matmul_cases():
    close(torch.matmul(t(A23), t(B34)), A23 @ B34)
    close(torch.matmul(t(V3), t(V3)), V3 @ V3)
    close(torch.matmul(t(A23), t(V3)), A23 @ V3)
    close(torch.matmul(t(V3), t(B34)), V3 @ B34)
    close(torch.matmul(t(BA), t(B34)), BA @ B34)
    close(torch.matmul(t(A23), t(BB)), A23 @ BB)
    close(torch.matmul(t(BA), t(BB)), BA @ BB)
    close(t(A23) @ t(B34), A23 @ B34)
    assert torch.matmul(t(V3), t(V3)).shape == ()


def test_matmul_dtypes_and_ints():
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    r = torch.mm(t(a), t(a.T.copy()))
    assert r.dtype == torch.int64
    np.testing.assert_array_equal(r.numpy(), a @ a.T)


def test_rmatmul_and_out():
    out = torch.empty(2, 4)
    torch.matmul(t(A23), t(B34), out=out)
    close(out, A23 @ B34)
    o = np.ones((4, 2), np.float32)
    close(t(A23).__rmatmul__(t(o)), o @ A23)


@pytest.mark.parametrize(
    "fn, args, msg",
    [
        (torch.mm, (A23, A23), r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)"),
        (
            torch.mm,
            (A23, B34.astype(np.float64)),
            "expected m1 and m2 to have the same dtype, but got: float != double",
        ),
        (torch.matmul, (V3, V3[:2]), "inconsistent tensor size"),
        (torch.matmul, (BA, BB[:, :2]), "Expected size for first two dimensions of batch2"),
        (torch.bmm, (A23, B34), "batch1 must be a 3D tensor"),
        (torch.dot, (V3, V3.astype(np.float64)), "dot : expected both vectors to have same dtype"),
        (torch.mv, (A23, V3[:2]), r"size mismatch, got input \(2\), mat \(2x3\), vec \(2\)"),
        (torch.outer, (A23, V3), "outer: Expected 1-D argument self, but got 2-D"),
        (torch.trace, (V3,), "trace: expected a matrix, but got tensor with dim 1"),
    ],
)
def test_errors(fn, args, msg):
    with pytest.raises(RuntimeError, match=msg):
        fn(*[t(a) for a in args])


def test_bool_mm_not_implemented():
    b = t(np.ones((2, 2), bool))
    with pytest.raises(NotImplementedError):
        torch.mm(b, b)


def test_simple_products():
    close(torch.bmm(t(BA), t(BB)), BA @ BB)
    close(torch.mv(t(A23), t(V3)), A23 @ V3)
    close(torch.dot(t(V3), t(V3)), V3 @ V3)
    close(torch.vdot(t(V3), t(V3)), V3 @ V3)
    close(torch.inner(t(A23), t(V3)), np.inner(A23, V3))
    close(torch.outer(t(V3), t(V3)), np.outer(V3, V3))
    close(torch.ger(t(V3), t(V3)), np.outer(V3, V3))
    close(torch.kron(t(A23), t(V3)), np.kron(A23, V3))
    close(torch.trace(t(B34)), np.trace(B34))
    assert torch.trace(t(np.ones((3, 3), np.int32))).dtype == torch.int64


def test_addmm_family_and_inplace():
    c = RNG.standard_normal((2, 4)).astype(np.float32)
    close(torch.addmm(t(c), t(A23), t(B34), beta=0.5, alpha=2), 0.5 * c + 2 * A23 @ B34)
    # beta=0 ignores the input entirely, nan included.
    nan = np.full((2, 4), np.nan, np.float32)
    close(torch.addmm(t(nan), t(A23), t(B34), beta=0), A23 @ B34)
    x = t(c)
    x.addmm_(t(A23), t(B34))
    close(x, c + A23 @ B34)
    close(torch.addmv(t(c[:, 0]), t(A23), t(V3)), c[:, 0] + A23 @ V3)
    close(torch.addr(t(A23), t(V3[:2]), t(V3)), A23 + np.outer(V3[:2], V3))
    close(torch.baddbmm(t(c), t(BA), t(BB)), c + BA @ BB)
    close(torch.addbmm(t(c), t(BA), t(BB)), c + (BA @ BB).sum(0))
    with pytest.raises(RuntimeError, match="argument beta must not be a floating point"):
        i = t(np.ones((2, 3), np.int64))
        torch.addr(i, t(np.ones(2, np.int64)), t(np.ones(3, np.int64)), beta=0.5)


def test_failed_inplace_leaves_tensor():
    x = t(np.ones((2, 4), np.float32))
    with pytest.raises(RuntimeError):
        x.addmm_(t(A23), t(A23))
    np.testing.assert_array_equal(x.numpy(), np.ones((2, 4)))


def test_einsum_formats():
    close(torch.einsum("ij,jk->ik", t(A23), t(B34)), A23 @ B34)
    close(torch.einsum("ij,jk", [t(A23), t(B34)]), A23 @ B34)
    close(torch.einsum(t(A23), [0, 1], t(B34), [1, 2], [0, 2]), A23 @ B34)
    close(torch.einsum("...ij,...jk", t(BA), t(BB)), BA @ BB)
    close(torch.einsum("ii", t(B34[:, :3])), np.trace(B34[:, :3]))
    with pytest.raises(RuntimeError, match="subscript j has size 4 for operand 1"):
        torch.einsum("ij,jk", t(A23), t(np.ones((4, 4), np.float32)))


def test_tensordot():
    close(torch.tensordot(t(A23), t(B34), dims=1), A23 @ B34)
    close(torch.tensordot(t(A23), t(A23), dims=([0, 1], [0, 1])), (A23 * A23).sum())
    with pytest.raises(RuntimeError, match="tensordot expects dims >= 0"):
        torch.tensordot(t(A23), t(B34), dims=-1)


def test_cross():
    a = RNG.standard_normal((2, 3)).astype(np.float32)
    b = RNG.standard_normal((2, 3)).astype(np.float32)
    close(torch.linalg.cross(t(a), t(b)), np.cross(a, b))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        close(torch.cross(t(a.T.copy()), t(b.T.copy())), np.cross(a, b).T)
    assert any("deprecated" in str(x.message) for x in w)
    with pytest.raises(RuntimeError, match="linalg.cross: inputs dimension -1 must have length 3"):
        torch.linalg.cross(t(A23[:, :2]), t(A23[:, :2]))


def test_cdist():
    x = RNG.standard_normal((3, 2)).astype(np.float32)
    y = RNG.standard_normal((4, 2)).astype(np.float32)
    d = np.abs(x[:, None] - y[None])
    close(torch.cdist(t(x), t(y)), np.sqrt((d**2).sum(-1)))
    close(torch.cdist(t(x), t(y), p=1), d.sum(-1))
    close(torch.cdist(t(x), t(y), p=float("inf")), d.max(-1))
    with pytest.raises(RuntimeError, match="cdist only supports non-negative p values"):
        torch.cdist(t(x), t(y), p=-1)


def test_multi_dot_and_chain():
    c = RNG.standard_normal((4, 2)).astype(np.float32)
    close(torch.linalg.multi_dot([t(A23), t(B34), t(c)]), A23 @ B34 @ c)
    close(torch.linalg.multi_dot([t(V3), t(B34)]), V3 @ B34)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close(torch.chain_matmul(t(A23), t(B34), t(c)), A23 @ B34 @ c)
    with pytest.raises(RuntimeError, match="expected at least 2 tensors but got 1"):
        torch.linalg.multi_dot([t(A23)])
