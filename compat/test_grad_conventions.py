"""Gradients at PyTorch's singular points: kinks, zeros and ties, against real PyTorch.

At these points the derivative is a convention, and jax's differs from PyTorch's (jax:
d|x|/dx = 1 at 0, `maximum` splits a tie, a norm's gradient at a zero vector is nan).
Each case builds the same small function in both libraries, on inputs sitting on the
singular point, and compares the gradients (nan and inf included) and the forward value.
"""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402

NAN, INF = math.nan, math.inf


def _w(lib, *values):
    return lib.tensor(list(values))


# name -> (function of (lib, *inputs) -> tensor, inputs)
CASES = {
    "normalize_zero_row": (
        lambda L, x: (L.nn.functional.normalize(x) * L.tensor([[1.0, 2, 3], [4, 5, 6]])).sum(),
        [[0.0, 0, 0], [1, 2, 2]],
    ),
    "normalize_dim0": (
        lambda L, x: (L.nn.functional.normalize(x, dim=0) * L.tensor([[1.0, 2], [3, 4]])).sum(),
        [[0.0, 1], [0, 2]],
    ),
    "linalg_norm_zero": (lambda L, x: L.linalg.norm(x), [0.0, 0]),
    "linalg_norm_zero_rows": (lambda L, x: L.linalg.norm(x, dim=1).sum(), [[0.0, 0, 0], [1, 2, 2]]),
    "vector_norm_p1_zero": (lambda L, x: L.linalg.vector_norm(x, 1), [0.0, 0]),
    "vector_norm_p3_zero": (lambda L, x: L.linalg.vector_norm(x, 3), [0.0, 0]),
    "vector_norm_p1_5_zero": (lambda L, x: L.linalg.vector_norm(x, 1.5), [0.0, 0, 1]),
    "vector_norm_inf_zero": (lambda L, x: L.linalg.vector_norm(x, INF), [0.0, 0]),
    "vector_norm_inf_ties": (lambda L, x: L.linalg.vector_norm(x, INF), [-2.0, 1, 2]),
    "vector_norm_p0_5": (lambda L, x: L.linalg.vector_norm(x, 0.5), [0.0, 1]),
    "vector_norm_p-1": (lambda L, x: L.linalg.vector_norm(x, -1), [0.0, 1]),
    "tensor_norm_zero": (lambda L, x: x.norm(), [0.0, 0]),
    "frobenius_zero": (lambda L, x: L.linalg.matrix_norm(x), [[0.0, 0], [0, 0]]),
    "dist_equal": (lambda L, x, y: L.dist(x, y), [1.0, 2], [1.0, 2]),
    "pdist_equal_rows": (lambda L, x: L.nn.functional.pdist(x).sum(), [[1.0, 2], [1, 2]]),
    "cosine_similarity_zero": (
        lambda L, x, y: L.nn.functional.cosine_similarity(x, y).sum(),
        [[0.0, 0]],
        [[1.0, 2]],
    ),
    "clip_by_norm": (lambda L, x: (x / x.norm().clamp_min(1e-6)).sum(), [0.0, 0]),
    "renorm_zero_slice": (lambda L, x: x.renorm(2, 0, 1.0).sum(), [[0.0, 0], [3, 4]]),
    "entr": (lambda L, x: L.special.entr(x).sum(), [0.0, -1, 0.5, 1]),
    "xlogy_zeros": (lambda L, x, y: L.xlogy(x, y).sum(), [0.0, 0, 1], [0.0, 1, 0]),
    "xlog1py_zeros": (lambda L, x, y: L.special.xlog1py(x, y).sum(), [0.0, 0], [-1.0, 1]),
    "sqrt_under_where": (
        lambda L, x: L.where(x > 0, L.sqrt(x), L.zeros_like(x)).sum(),
        [0.0, 1, -1],
    ),
    "abs_zero": (lambda L, x: x.abs().sum(), [0.0, -1, 2]),
    "l1_loss_zero": (lambda L, x: L.nn.functional.l1_loss(x, L.zeros(2)), [0.0, 1]),
    "relu_zero": (lambda L, x: L.relu(x).sum(), [0.0, 1, -1, NAN]),
    "relu6_edges": (lambda L, x: L.nn.functional.relu6(x).sum(), [0.0, 6, 3]),
    "hardtanh_edges": (lambda L, x: L.nn.functional.hardtanh(x).sum(), [-1.0, 1, 0, 2]),
    "hardsigmoid_edges": (lambda L, x: L.nn.functional.hardsigmoid(x).sum(), [-3.0, 3, 0, -4, 4]),
    "hardswish_edges": (
        lambda L, x: L.nn.functional.hardswish(x).sum(),
        [-3.0, 3, 0, -4, 4, 2.5, -2.5],
    ),
    "clamp_edges": (lambda L, x: x.clamp(0, 1).sum(), [0.0, 1, 0.5, 2, -1]),
    "clamp_min_edge": (lambda L, x: x.clamp_min(0).sum(), [0.0, 1]),
    "clamp_max_edge": (lambda L, x: x.clamp_max(0).sum(), [0.0, -1]),
    "clamp_tensor_bounds": (
        lambda L, x, lo, hi: L.clamp(x, lo, hi).sum(),
        [0.0, 1, 0.5, 3, -2],
        [0.0, 0, 1, 1, 0],
        [1.0, 1, 0, 1, 0],
    ),
    "softplus_threshold": (lambda L, x: L.nn.functional.softplus(x, threshold=1).sum(), [1.0]),
    "max_ties": (lambda L, x: x.max(), [1.0, 3, 3]),
    "min_ties": (lambda L, x: x.min(), [1.0, 1, 3]),
    "max_nan": (lambda L, x: x.max(), [NAN, 1.0]),
    "amax_ties": (lambda L, x: x.amax(), [1.0, 3, 3]),
    "amin_dim_ties": (lambda L, x: x.amin(dim=1).sum(), [[1.0, 1, 3]]),
    "max_dim_ties": (lambda L, x: x.max(dim=1).values.sum(), [[1.0, 3, 3]]),
    "maximum_ties": (lambda L, x, y: L.maximum(x, y).sum(), [1.0, 2], [1.0, 3]),
    "fmax_ties": (lambda L, x, y: L.fmax(x, y).sum(), [1.0, 2, NAN], [1.0, 3, 1]),
    "fmin_ties": (lambda L, x, y: L.fmin(x, y).sum(), [1.0, 2, 0], [1.0, 3, NAN]),
    "median_ties": (lambda L, x: x.median(), [1.0, 1, 2, 1]),
    "nanmedian_ties": (lambda L, x: x.nanmedian(), [1.0, 1, 2, NAN, 1]),
    "median_dim_ties": (lambda L, x: x.median(0).values, [1.0, 1, 2, 1]),
    "sort_ties": (lambda L, x: (x.sort().values * _w(L, 1.0, 2, 3, 4)).sum(), [2.0, 1, 2, 1]),
    "sort_ties_descending": (
        lambda L, x: (x.sort(descending=True).values * _w(L, 1.0, 2, 3, 4)).sum(),
        [2.0, 1, 2, 1],
    ),
    "pow_zero_exponent": (lambda L, x: x.pow(0.0).sum(), [0.0, 2]),
    "pow_tensor_zeros": (lambda L, x, y: x.pow(y).sum(), [0.0, 0, 2], [2.0, 0, 0]),
    "pow_scalar_base_zero": (lambda L, y: L.pow(0.0, y).sum(), [0.0, 1]),
    "atan2_origin": (lambda L, x, y: L.atan2(x, y).sum(), [0.0, 1], [0.0, 1]),
    "hypot_origin": (lambda L, x, y: L.hypot(x, y).sum(), [0.0, 3], [0.0, 4]),
    "std_constant": (lambda L, x: x.std(), [1.0, 1]),
    "var_constant": (lambda L, x: x.var(), [1.0, 1]),
    "std_dim_constant_row": (lambda L, x: x.std(dim=1).sum(), [[1.0, 1], [1, 2]]),
    "logit_edges": (lambda L, x: L.logit(x).sum(), [0.0, 1, 0.5]),
    "logit_eps_edges": (lambda L, x: L.logit(x, eps=0.1).sum(), [0.0, 0.1, 0.9, 0.5]),
    "lgamma_zero": (lambda L, x: L.lgamma(x).sum(), [0.0]),
    "copysign_zero": (lambda L, x, y: L.copysign(x, y).sum(), [0.0, 1], [-1.0, 0]),
    "bce_edges": (
        lambda L, x: L.nn.functional.binary_cross_entropy(x, L.tensor([1.0, 0])),
        [1.0, 0],
    ),
    "threshold_edge": (lambda L, x: L.nn.functional.threshold(x, 1.0, 0.0).sum(), [1.0]),
}


def _grads(lib, case):
    fn, inputs = CASES[case][0], CASES[case][1:]
    leaves = [lib.tensor(v, requires_grad=True) for v in inputs]
    out = fn(lib, *leaves)
    out.backward()
    return (
        out.detach().numpy() if lib is torch else np.asarray(out.detach()._array),
        [
            None
            if t.grad is None
            else (t.grad.numpy() if lib is torch else np.asarray(t.grad._array))
            for t in leaves
        ],
    )


@pytest.mark.parametrize("case", sorted(CASES))
def test_gradient_at_singular_point(case):
    t_out, t_grads = _grads(torch, case)
    j_out, j_grads = _grads(jtorch, case)
    np.testing.assert_allclose(j_out, t_out, rtol=1e-6, equal_nan=True)
    for k, (e, a) in enumerate(zip(t_grads, j_grads)):
        if e is None:
            assert a is None or not np.any(a), f"grad[{k}]: torch has none, jtorch {a}"
            continue
        assert a is not None, f"grad[{k}]: jtorch has none"
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6, equal_nan=True, err_msg=f"grad[{k}]")


@pytest.mark.parametrize("ord", [1, -1, INF, -INF, 2, -2, "nuc"])
def test_matrix_norm_gradient_at_zero_entries(ord):
    # a zero matrix (the OpInfo 'subgradients_at_zero' sample) and a row with a zero entry
    for value in ([[0.0] * 3] * 3, [[0.0, 1.0, -2.0], [3.0, 0.0, 1.0], [1.0, 1.0, 0.0]]):
        grads = []
        for lib in (torch, jtorch):
            x = lib.tensor(value, requires_grad=True)
            lib.linalg.matrix_norm(x, ord).backward()
            grads.append(np.asarray(x.grad.tolist()))
        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n, N", [(3, 0), (3, 1), (1, None), (0, None), (3, 2)])
def test_vander_with_one_column_or_none_is_not_tied_to_x(n, N):
    # PyTorch computes only the columns after the first from x: with N <= 1 the result is
    # its `ones` start, which does not require grad.
    seen = []
    for lib in (torch, jtorch):
        x = lib.arange(1.0, n + 1.0).requires_grad_()
        for increasing in (False, True):
            v = lib.vander(x, N=N, increasing=increasing)
            name = v.grad_fn.name() if v.grad_fn is not None else None
            seen.append((tuple(v.shape), str(v.dtype), v.requires_grad, v.is_leaf, name))
    assert seen[2:] == seen[:2]
