"""Indexing at many positions and creation at many sizes: jtorch against PyTorch.

jtorch traces integer positions (`x[i]`, `x[a:b]`, `narrow`, `as_strided` offsets) and
builds new sizes without a compile per size (DESIGN 13); these cases check that what
users see is unchanged: values, dtypes, shapes, strides, offsets, gradients and errors.
"""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402


def _plain(x):
    if isinstance(x, (torch.Tensor, jtorch.Tensor)):
        return (
            "tensor",
            x.tolist(),
            str(x.dtype),
            tuple(x.shape),
            tuple(x.stride()),
            x.storage_offset(),
        )
    if isinstance(x, (tuple, list)):
        return tuple(_plain(v) for v in x)
    return x


def _run(lib, case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ("ok", _plain(case(lib)))
        except Exception as e:  # noqa: BLE001 - the exception is what is compared
            return ("raises", type(e).__name__, str(e).split("\n")[0])


def grid(lib, *shape):
    return lib.arange(float(np.prod(shape))).reshape(shape).clone()


def _write_rows(lib):
    x = lib.zeros(6, 3)
    for i in range(-6, 6):
        x[i] = x[i] + i
    return x


def _write_slices(lib):
    x = grid(lib, 10, 2)
    for a in range(0, 8):
        x[a : a + 3 : 2, 1] = -a
    x[7:100] = 5.0
    return x


def _select_grads(lib):
    w = lib.zeros(5, 2, requires_grad=True)
    for i in range(-5, 5):
        (w[i] * (i + 10)).sum().backward()
    return w.grad


def _slice_grads(lib):
    w = lib.arange(12.0).reshape(6, 2).requires_grad_()
    total = 0
    for a in range(0, 5):
        total = total + (w[a : a + 2] ** 2).sum() + w.narrow(0, a, 1).sum()
    total.backward()
    return w.grad


def _copy_slices_grads(lib):
    src = lib.tensor([1.0, 2.0], requires_grad=True)
    x = lib.zeros(5, 2)
    for i in range(5):
        x = x.clone()
        x[i] = src * (i + 1)
    x.pow(2).sum().backward()
    return src.grad, x


def _views_of_views(lib):
    x = grid(lib, 8, 3)
    return [x[a:][1] for a in range(0, 6)] + [x[a:, 1:][::2] for a in range(0, 5)]


def _full_cases(lib):
    out = []
    cases = [
        (1.5, "float32"),
        (-255, "uint8"),
        (-1, "uint8"),
        (1.5, "int64"),
        (True, "float32"),
        (1 + 2j, "complex64"),
        (3, "bool"),
        (70000, "float16"),
        (1e39, "bfloat16"),
        (1 + 0j, "float32"),
        (65504.0, "float16"),
        (2**63 - 1, "float32"),
        (float("inf"), "bool"),
        (1 + 2j, "bool"),
        (-(2**63), "int64"),
        (float("nan"), "float64"),
        (float("-inf"), "float32"),
        (2, None),
        (2.5, None),
        (True, None),
        (1j, None),
    ]
    for value, dt in cases:
        dtype = getattr(lib, dt) if dt else None
        out.append(lib.full((2,), value, dtype=dtype))
    return out


def _views_backward_twice(lib):
    # a view's node keeps its positions, not saved tensors: a second backward is allowed
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for make in (
        lambda: x[0],
        lambda: x[1:].sum(),
        lambda: x.narrow(0, 1, 2).sum(),
        lambda: x.as_strided((2,), (1,), 1).sum(),
    ):
        y = make()
        y.backward()
        y.backward()
    return x.grad


OVERFLOWS = [
    (300, "uint8"),
    (1e40, "float32"),
    (2**63, "int64"),
    (float("nan"), "int64"),
    (-256, "uint8"),
    (255.9, "uint8"),
    (-1.5, "uint8"),
    (2**31, "int32"),
    (128, "int8"),
    (-129, "int8"),
    (40000, "int16"),
    (1 + 2j, "float32"),
    (1 + 2j, "int64"),
    (float("inf"), "int64"),
    (2**64, "uint8"),
    (2**64, "float32"),
]

CASES = {
    "getitem_ints": lambda lib: [grid(lib, 6, 2)[i] for i in range(-6, 6)],
    "getitem_pairs": lambda lib: [
        grid(lib, 4, 3)[i, j] for i in range(-4, 4) for j in range(-3, 3, 2)
    ],
    "getitem_slices": lambda lib: [
        grid(lib, 7, 2)[a:b] for a in range(-8, 9, 3) for b in range(-9, 10, 4)
    ],
    "getitem_steps": lambda lib: [grid(lib, 9)[a::k] for a in range(0, 9, 2) for k in (2, 3)],
    "bool_items": lambda lib: [bool((lib.arange(8) % 3 == 0)[i]) for i in range(8)],
    "setitem_rows": _write_rows,
    "setitem_slices": _write_slices,
    "narrow": lambda lib: [grid(lib, 6, 2).narrow(0, a, 2) for a in range(-6, 5)],
    "narrow_dim1": lambda lib: [grid(lib, 2, 6).narrow(1, a, 3) for a in range(0, 4)],
    "select": lambda lib: [grid(lib, 3, 4).select(1, i) for i in range(-4, 4)],
    "split_chunk_unbind": lambda lib: (
        grid(lib, 7, 2).split(3),
        grid(lib, 7, 2).chunk(3),
        grid(lib, 3, 2).unbind(1),
    ),
    "as_strided_offsets": lambda lib: [
        lib.arange(20.0).as_strided((2, 3), (4, 1), k) for k in range(0, 10)
    ],
    "unfold": lambda lib: [lib.arange(float(n)).unfold(0, 3, 2) for n in range(3, 9)],
    "views_of_views": _views_of_views,
    "select_grads": _select_grads,
    "slice_grads": _slice_grads,
    "copy_slices_grads": _copy_slices_grads,
    "views_backward_twice": _views_backward_twice,
    "full": _full_cases,
    "full_like_new_full": lambda lib: [
        lib.full_like(lib.ones(2, 3), 7),
        lib.ones(2, dtype=lib.int32).new_full((3,), 4),
        lib.full_like(lib.ones(2), 2.5, dtype=lib.float64),
    ],
    "filled_sizes": lambda lib: [
        (lib.zeros(n, 2), lib.ones(n, dtype=lib.int16), lib.empty(n).shape, lib.full((n, 1), n))
        for n in range(0, 12)
    ],
    "eye": lambda lib: (
        [lib.eye(n) for n in range(0, 5)]
        + [lib.eye(n, m, dtype=lib.int64) for n in range(0, 4) for m in range(0, 4)]
    ),
    "random_shapes": lambda lib: [
        (tuple(t.shape), str(t.dtype))
        for n in range(1, 40, 7)
        for t in (
            lib.randn(n, 2),
            lib.rand(n, dtype=lib.float64),
            lib.randint(0, 5, (n,)),
            lib.empty(n).uniform_(),
        )
    ],
}

CASES["H_of_matrix_and_scalar"] = lambda lib: (
    grid(lib, 2, 3).H,
    lib.tensor(2.0).H,
    grid(lib, 2, 3).requires_grad_().H.grad_fn.name(),
)

ERRORS = {
    "index_past_end": lambda lib: grid(lib, 6, 2)[6],
    "index_before_start": lambda lib: grid(lib, 6, 2)[-7],
    "index_dim1": lambda lib: grid(lib, 6, 2)[0, 2],
    "setitem_past_end": lambda lib: grid(lib, 6, 2).__setitem__(6, 1.0),
    "select_past_end": lambda lib: grid(lib, 3, 4).select(1, 4),
    "narrow_start": lambda lib: grid(lib, 6).narrow(0, 7, 1),
    "narrow_length": lambda lib: grid(lib, 6).narrow(0, 4, 3),
    "negative_size": lambda lib: lib.zeros(2, -1),
    "negative_full": lambda lib: lib.full((-3,), 1.0),
    "eye_negative_m": lambda lib: lib.eye(2, -1),
    "eye_negative_n": lambda lib: lib.eye(-2),
    # Tensor.H is a matrix's: other ranks raise (0-D is deprecated, not refused)
    "H_of_vector": lambda lib: grid(lib, 6).H,
    "H_of_batch": lambda lib: grid(lib, 2, 3).reshape(2, 1, 3).H,
    "scalar_mul_backward_twice": lambda lib: [
        y.backward() for y in [(lib.tensor([1.0, 2.0], requires_grad=True) * 2).sum()] * 2
    ],
}
for _value, _dt in OVERFLOWS:
    ERRORS[f"full_{_dt}_{_value}"] = (
        lambda v, d: lambda lib: lib.full((2,), v, dtype=getattr(lib, d))
    )(_value, _dt)


@pytest.mark.parametrize("name", list(CASES))
def test_case(name):
    assert _run(jtorch, CASES[name]) == _run(torch, CASES[name])


@pytest.mark.parametrize("name", list(ERRORS))
def test_error(name):
    j, t = _run(jtorch, ERRORS[name]), _run(torch, ERRORS[name])
    assert t[0] == "raises", t
    assert j == t
