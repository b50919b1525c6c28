"""Top-level namespace parity: constants, legacy tensor types, `torch.testing`,
`torch.accelerator`, small predicates and knobs, `vander`, `frombuffer`, `cond`, `while_loop`.
"""

import array
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402


def _raises(fn_torch, fn_jtorch):
    """Both raise the same exception type with the same message."""
    with pytest.raises(Exception) as want:
        fn_torch()
    with pytest.raises(Exception) as got:
        fn_jtorch()
    assert type(got.value).__name__ == type(want.value).__name__, (got.value, want.value)
    assert str(got.value).split("\n")[0] == str(want.value).split("\n")[0]


def _same(a, b):
    assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
    b = b.detach()
    b = b.float() if b.dtype == torch.bfloat16 else b
    np.testing.assert_array_equal(np.asarray(a.detach()).astype(b.numpy().dtype), b.numpy())


def test_constants():
    for name in ("pi", "e", "inf", "nan", "newaxis"):
        want, got = getattr(torch, name), getattr(jtorch, name)
        assert type(got) is type(want)
        assert got is want or got == want or (want != want and got != got)


# ---------------------------------------------------------------------------
# Legacy tensor types

_TYPE_NAMES = [
    "FloatTensor",
    "DoubleTensor",
    "HalfTensor",
    "BFloat16Tensor",
    "LongTensor",
    "IntTensor",
    "ShortTensor",
    "CharTensor",
    "ByteTensor",
    "BoolTensor",
]


@pytest.mark.parametrize("name", _TYPE_NAMES)
def test_legacy_type(name):
    T, J = getattr(torch, name), getattr(jtorch, name)
    assert repr(J) == repr(T) and J.dtype.__repr__() == repr(T.dtype)
    assert repr(getattr(jtorch.cuda, name)) == repr(getattr(torch.cuda, name))
    _same(J([1, 0, 2]), T([1, 0, 2]))
    assert tuple(J(2, 3).shape) == tuple(T(2, 3).shape)
    for lib_t, lib in ((T, torch), (J, jtorch)):
        assert isinstance(lib.ones(2, dtype=lib_t.dtype), lib_t)
    others = [getattr(jtorch, n) for n in _TYPE_NAMES if n != name]
    assert not any(isinstance(jtorch.ones(1, dtype=J.dtype), o) for o in others)
    assert not isinstance(jtorch.ones(1, dtype=J.dtype), getattr(jtorch.cuda, name))
    # Tensor.type() with the class and with its name.
    x_t, x_j = torch.tensor([1.5, -2.0]), jtorch.tensor([1.5, -2.0])
    _same(x_j.type(J), x_t.type(T))
    _same(x_j.type(f"torch.{name}"), x_t.type(f"torch.{name}"))
    assert x_j.type(J).type() == x_t.type(T).type()


def test_legacy_constructors():
    # A size gives uninitialised memory in PyTorch (zeros in jtorch): shapes only.
    sizes = [
        ((), {}),
        ((2, 3), {}),
        ((torch.Size([2]),), {}),
        ((), {"size": (2,)}),
        ((0,), {}),
        ((2,), {"device": "cpu"}),
    ]
    data = [(([[1.5, 2], [3, 4]],), {}), (((2, 3),), {}), ((np.array([1, 2]),), {})]
    for k, (args, kwargs) in enumerate(sizes + data):
        jargs = tuple(jtorch.Size(a) if isinstance(a, torch.Size) else a for a in args)
        want, got = torch.FloatTensor(*args, **kwargs), jtorch.FloatTensor(*jargs, **kwargs)
        assert tuple(got.shape) == tuple(want.shape) and got.dtype == jtorch.float32
        if k >= len(sizes):
            _same(got, want)
    _same(jtorch.LongTensor([1.5, -2.7]), torch.LongTensor([1.5, -2.7]))
    x_t, x_j = torch.ones(2, requires_grad=True), jtorch.ones(2, requires_grad=True)
    a_t, a_j = torch.FloatTensor(x_t), jtorch.FloatTensor(x_j)
    assert a_j.requires_grad == a_t.requires_grad and a_j._base is x_j
    a_j.detach()[0] = 5
    assert float(x_j[0]) == 5.0
    for bad in [(2.5,), ("a",), (-1,), (2, "a"), ([1], [2]), (torch.ones(1, dtype=torch.int64),)]:
        jbad = tuple(
            jtorch.ones(1, dtype=jtorch.int64) if isinstance(b, torch.Tensor) else b for b in bad
        )
        _raises(lambda: torch.FloatTensor(*bad), lambda: jtorch.FloatTensor(*jbad))
    _raises(
        lambda: torch.FloatTensor(2, device="cuda"), lambda: jtorch.FloatTensor(2, device="cuda")
    )
    _raises(
        lambda: torch.FloatTensor([1.0], dtype=torch.float64),
        lambda: jtorch.FloatTensor([1.0], dtype=jtorch.float64),
    )
    if not torch.cuda.is_available() and not jtorch.cuda.is_available():
        _raises(lambda: torch.cuda.FloatTensor(2), lambda: jtorch.cuda.FloatTensor(2))


def test_set_default_tensor_type():
    try:
        for lib in (torch, jtorch):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                lib.set_default_tensor_type(lib.DoubleTensor)
                assert lib.get_default_dtype() == lib.float64
                assert lib.tensor([1.0]).dtype == lib.float64
                lib.set_default_tensor_type("torch.FloatTensor")
            assert "set_default_tensor_type() is deprecated" in str(w[0].message)
            assert lib.get_default_dtype() == lib.float32
        for bad_t, bad_j in [
            (torch.LongTensor, jtorch.LongTensor),
            (torch.float64, jtorch.float64),
            ("foo_not_a_module", "foo_not_a_module"),
            (3, 3),
        ]:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _raises(
                    lambda: torch.set_default_tensor_type(bad_t),
                    lambda: jtorch.set_default_tensor_type(bad_j),
                )
    finally:
        torch.set_default_dtype(torch.float32)
        jtorch.set_default_dtype(jtorch.float32)


# ---------------------------------------------------------------------------
# torch.testing


def _pairs():
    """(actual, expected, kwargs) triples, built in both libraries."""

    def both(f):
        return f(torch), f(jtorch)

    cases = [
        (lambda L: L.tensor([1.0, 2.0, 3.0]), lambda L: L.tensor([1.0, 2.5, 3.0]), {}),
        (
            lambda L: L.tensor([[1.0, 2.0], [3.0, 4.0]]),
            lambda L: L.tensor([[1.0, 2.0], [3.1, 0.0]]),
            {},
        ),
        (lambda L: L.tensor([1.0, 2.0]), lambda L: L.tensor([1.0, 2.0 + 1e-6]), {}),
        (
            lambda L: L.tensor([1.0, 2.0], dtype=L.float64),
            lambda L: L.tensor([1.0, 2.0 + 1e-6], dtype=L.float64),
            {},
        ),
        (
            lambda L: L.tensor([1.0, 2.0], dtype=L.float16),
            lambda L: L.tensor([1.0, 2.001], dtype=L.float16),
            {},
        ),
        (lambda L: L.tensor([1, 2, 3]), lambda L: L.tensor([1, 2, 4]), {}),
        (lambda L: L.tensor([True, False]), lambda L: L.tensor([True, True]), {}),
        (lambda L: L.tensor(1.0), lambda L: L.tensor(1.5), {}),
        (lambda L: L.tensor([1.0, 0.0]), lambda L: L.tensor([1.0, 0.1]), {}),
        (lambda L: L.tensor([1.0, float("nan")]), lambda L: L.tensor([1.0, float("nan")]), {}),
        (
            lambda L: L.tensor([1.0, float("nan")]),
            lambda L: L.tensor([1.0, float("nan")]),
            {"equal_nan": True},
        ),
        (lambda L: L.tensor([1.0, 2.0]), lambda L: L.tensor([1.1, 2.0]), {"rtol": 0.2, "atol": 0}),
        (lambda L: L.tensor([1.0, 2.0]), lambda L: L.tensor([1.1, 2.0]), {"rtol": 0.2}),
        (lambda L: L.tensor([1.0, 2.0]), lambda L: L.tensor([1.0, 2.0], dtype=L.float64), {}),
        (
            lambda L: L.tensor([1.0, 2.0]),
            lambda L: L.tensor([1.0, 2.0], dtype=L.float64),
            {"check_dtype": False},
        ),
        (lambda L: L.tensor([1, 2]), lambda L: L.tensor([1.0, 2.5]), {"check_dtype": False}),
        (lambda L: L.ones(2), lambda L: L.ones(3), {}),
        (lambda L: L.ones(2, 2).t(), lambda L: L.ones(2, 2), {"check_stride": True}),
        (lambda L: L.tensor([1.0 + 1j, 2.0]), lambda L: L.tensor([1.0 + 1j, 2.0 + 1e-3j]), {}),
        (lambda L: 1.0, lambda L: 1.5, {}),
        (lambda L: 1, lambda L: 1.0, {"check_dtype": True}),
        (lambda L: 1, lambda L: 2, {}),
        (lambda L: True, lambda L: False, {}),
        (lambda L: None, lambda L: 1, {}),
        (lambda L: [L.ones(2), 1.0], lambda L: [L.ones(2), 1.5], {}),
        (lambda L: [L.ones(2)], lambda L: [L.ones(2), 1.0], {}),
        (lambda L: {"a": L.ones(2), "b": 2}, lambda L: {"a": L.zeros(2), "b": 2}, {}),
        (lambda L: {"a": 1}, lambda L: {"b": 1}, {}),
        (lambda L: np.array([1.0, 2.0]), lambda L: np.array([1.0, 2.5]), {}),
        (lambda L: np.array([1.0, 2.0]), lambda L: L.tensor([1.0, 2.0]), {}),
        (lambda L: "ab", lambda L: "ab", {}),
        (lambda L: L.tensor([1.0, 2.0]), lambda L: L.tensor([1.0, 3.0]), {"msg": "custom"}),
        (
            lambda L: L.tensor([1.0, 2.0]),
            lambda L: L.tensor([1.0, 3.0]),
            {"msg": lambda m: f"Header\n\n{m}\n\nFooter"},
        ),
        (
            lambda L: [L.tensor([1.0, 2.0])],
            lambda L: [L.tensor([1.0, 3.0])],
            {"msg": lambda m: m + "!"},
        ),
    ]
    for a, e, kw in cases:
        yield both(a), both(e), kw


def _outcome(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the outcome is compared
        msg = str(exc).replace("jtorch._tensor.Tensor", "torch.Tensor")
        return type(exc).__name__, msg
    return None


def test_assert_close_messages():
    for (a_t, a_j), (e_t, e_j), kw in _pairs():
        want = _outcome(lambda: torch.testing.assert_close(a_t, e_t, **kw))
        got = _outcome(lambda: jtorch.testing.assert_close(a_j, e_j, **kw))
        assert got == want, (kw, got, want)


def test_assert_allclose():
    for a, e in [
        ([1.0, 2.0], [1.0, 2.0001]),
        ([1.0, 2.0], [1.0, 2.1]),
        ([1.0, float("nan")], [1.0, float("nan")]),
    ]:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            want = _outcome(lambda: torch.testing.assert_allclose(torch.tensor(a), e))
            got = _outcome(lambda: jtorch.testing.assert_allclose(jtorch.tensor(a), e))
        assert got == want
        assert w and all(x.category is FutureWarning for x in w)


def test_make_tensor():
    J = jtorch
    for dtype, lo, hi in [
        (J.float32, -9, 9),
        (J.int64, -9, 10),
        (J.uint8, 0, 10),
        (J.bool, 0, 2),
        (J.complex64, -9, 9),
    ]:
        x = J.testing.make_tensor((4, 50), dtype=dtype, device="cpu")
        assert x.dtype is dtype and tuple(x.shape) == (4, 50)
        v = np.asarray(x).astype(np.complex128)
        for part in (v.real, v.imag) if dtype.is_complex else (v.real,):
            assert part.min() >= lo and part.max() < hi
    x = J.testing.make_tensor(
        3,
        4,
        dtype=J.float64,
        device="cpu",
        low=0.5,
        high=1.0,
        requires_grad=True,
        noncontiguous=True,
    )
    t = torch.testing.make_tensor(3, 4, dtype=torch.float64, device="cpu", noncontiguous=True)
    assert x.requires_grad and x.is_contiguous() == t.is_contiguous()
    assert x.stride() == t.stride() and x.storage_offset() == t.storage_offset()
    assert float(x.min()) >= 0.5 and float(x.max()) < 1.0
    ints = J.testing.make_tensor(200, dtype=J.int8, device="cpu", low=-1, high=1, exclude_zero=True)
    assert set(np.asarray(ints).tolist()) <= {-1, 1}
    for kw in [
        dict(dtype="int64", requires_grad=True),
        dict(dtype="float32", low=2, high=1),
        dict(dtype="float32", low=float("nan")),
        dict(dtype="uint8", low=-5, high=-1),
        dict(dtype="float32", noncontiguous=True, memory_format="contiguous_format"),
    ]:

        def make(lib, kw=kw):
            args = {
                k: (getattr(lib, v) if k in ("dtype", "memory_format") else v)
                for k, v in kw.items()
            }
            return lib.testing.make_tensor((2, 2), device="cpu", **args)

        _raises(lambda: make(torch), lambda: make(jtorch))


# ---------------------------------------------------------------------------
# torch.accelerator


def test_accelerator_cpu_only():
    if torch.accelerator.is_available() or jtorch.accelerator.is_available():
        pytest.skip("an accelerator is present")
    A, B = torch.accelerator, jtorch.accelerator
    assert B.current_accelerator() is A.current_accelerator() is None
    assert B.current_accelerator(check_available=True) is None
    assert B.device_count() == A.device_count() == 0
    for fn in [
        lambda m: m.current_device_index(),
        lambda m: m.set_device_index(0),
        lambda m: m.set_device_index("cpu"),
        lambda m: m.synchronize(),
        lambda m: m.synchronize("cpu"),
        lambda m: m.set_device_index(None),
    ]:
        _raises(lambda: fn(A), lambda: fn(B))
    assert B.set_device_index(-1) is A.set_device_index(-1) is None
    # The quickstart tutorial's line.
    device = B.current_accelerator().type if B.is_available() else "cpu"
    assert device == "cpu"


# ---------------------------------------------------------------------------
# Small functions


def test_predicates_and_knobs():
    for dt in ("float32", "uint8", "bool", "int8", "complex64"):
        a_t, a_j = (
            torch.ones(2, dtype=getattr(torch, dt)),
            jtorch.ones(2, dtype=getattr(jtorch, dt)),
        )
        assert jtorch.is_signed(a_j) == torch.is_signed(a_t)
    x_t, x_j = torch.ones(2), jtorch.ones(2)
    assert jtorch.is_same_size(x_j, jtorch.ones(2)) and not jtorch.is_same_size(
        x_j, jtorch.ones(1, 2)
    )
    assert jtorch.get_device(x_j) == torch.get_device(x_t) == -1
    assert jtorch.is_inference(x_j) == torch.is_inference(x_t)
    for name, arg in [("is_same_size", 3), ("get_device", 3), ("is_signed", 3)]:
        args = (x_t, arg) if name == "is_same_size" else (arg,)
        jargs = (x_j, arg) if name == "is_same_size" else (arg,)
        _raises(lambda: getattr(torch, name)(*args), lambda: getattr(jtorch, name)(*jargs))
    _raises(lambda: torch.set_num_interop_threads(0), lambda: jtorch.set_num_interop_threads(0))
    assert isinstance(jtorch.get_num_interop_threads(), int)
    assert type(jtorch.set_flush_denormal(False)) is bool
    assert jtorch.compiled_with_cxx11_abi() == torch.compiled_with_cxx11_abi()
    assert jtorch.has_lapack is True and jtorch.has_spectral is True
    for lib in (torch, jtorch):
        lib.set_warn_always(True)
        assert lib.is_warn_always_enabled()
        lib.set_warn_always(False)
        assert not lib.is_warn_always_enabled()
        assert lib.set_anomaly_enabled(True, False) is None
        assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
        lib.set_anomaly_enabled(False)
        assert not lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()
    assert jtorch.autograd.anomaly_mode.is_anomaly_enabled() is False
    try:
        for mode in ("warn", 2, "default", 1, 0):
            torch.set_deterministic_debug_mode(mode)
            jtorch.set_deterministic_debug_mode(mode)
            assert jtorch.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode()
            assert (
                jtorch.are_deterministic_algorithms_enabled()
                == torch.are_deterministic_algorithms_enabled()
            )
            assert (
                jtorch.is_deterministic_algorithms_warn_only_enabled()
                == torch.is_deterministic_algorithms_warn_only_enabled()
            )
        for bad in ("foo", 3, 1.0):
            _raises(
                lambda: torch.set_deterministic_debug_mode(bad),
                lambda: jtorch.set_deterministic_debug_mode(bad),
            )
    finally:
        torch.use_deterministic_algorithms(False)
        jtorch.use_deterministic_algorithms(False)


def test_sym_helpers():
    calls = [
        ("sym_int", (-2.7,)),
        ("sym_int", (3,)),
        ("sym_float", (3,)),
        ("sym_not", (0,)),
        ("sym_max", (1, 2.0)),
        ("sym_max", (3, 2)),
        ("sym_min", (1, 2.5)),
        ("sym_min", (np.int64(4), 2)),
        ("sym_ite", (True, 1, 2)),
        ("sym_ite", (False, 1, 2)),
        ("sym_sqrt", (4,)),
        ("sym_sum", ([1, 2, 3],)),
        ("sym_sum", (1, 2.5)),
    ]
    for name, args in calls:
        want, got = getattr(torch, name)(*args), getattr(jtorch, name)(*args)
        assert got == want and type(got) is type(want), (name, args, got, want)
    for name, args in [("sym_max", ("a", 1)), ("sym_ite", (1, 1, 2)), ("sym_ite", (True, 1, 2.0))]:
        _raises(lambda: getattr(torch, name)(*args), lambda: getattr(jtorch, name)(*args))


def test_vmap_is_func_vmap():
    assert jtorch.vmap is jtorch.func.vmap
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    _same(
        jtorch.vmap(lambda a: a.sum())(jtorch.tensor(x)),
        torch.vmap(lambda a: a.sum())(torch.tensor(x)),
    )


def test_vander():
    for data, dtype in [
        ([1.0, 2.0, -3.0], "float32"),
        ([1, 2, 3], "int32"),
        ([2, 3], "uint8"),
        ([True, False], "bool"),
        ([1 + 1j, 2.0], "complex64"),
    ]:
        for kw in [{}, {"N": 2}, {"N": 4, "increasing": True}, {"N": 0}, {"N": 1}]:
            want = torch.vander(torch.tensor(data, dtype=getattr(torch, dtype)), **kw)
            got = jtorch.vander(jtorch.tensor(data, dtype=getattr(jtorch, dtype)), **kw)
            _same(got, want)
    x_t = torch.tensor([0.5, 2.0, -1.5], dtype=torch.float64, requires_grad=True)
    x_j = jtorch.tensor([0.5, 2.0, -1.5], dtype=jtorch.float64, requires_grad=True)
    w = np.arange(12.0).reshape(3, 4)
    # PyTorch 2.13's own vander backward fails (an in-place cumprod on a saved view), so the
    # gradient is checked against d/dx sum_j w_ij x_i^(3-j) = sum_j w_ij (3-j) x_i^(2-j).
    x = np.asarray(x_t.detach())
    expected = sum(w[:, j] * (3 - j) * x ** max(2 - j, 0) for j in range(3))
    (jtorch.vander(x_j, N=4) * jtorch.tensor(w)).sum().backward()
    np.testing.assert_allclose(np.asarray(x_j.grad), expected, rtol=1e-12)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        (torch.vander(x_t, N=4) * torch.tensor(w)).sum().backward()
    for bad in [
        lambda L: L.vander(L.ones(2, 2)),
        lambda L: L.vander(L.tensor(2.0)),
        lambda L: L.vander(L.ones(2), -1),
    ]:
        _raises(lambda: bad(torch), lambda: bad(jtorch))


def test_frombuffer():
    raw = bytearray(np.arange(1, 4, dtype=np.int32).tobytes())
    for kw in [
        dict(dtype="int32"),
        dict(dtype="int32", count=2, offset=4),
        dict(dtype="int16", offset=2),
        dict(dtype="uint8"),
        dict(dtype="bool", count=3),
        dict(dtype="float32", requires_grad=True),
    ]:

        def make(lib, kw=kw):
            return lib.frombuffer(
                raw, **{k: (getattr(lib, v) if k == "dtype" else v) for k, v in kw.items()}
            )

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = make(torch)
        got = make(jtorch)
        _same(got, want)
        assert got.requires_grad == want.requires_grad and got.is_leaf
    floats = array.array("f", [1.5, 2.5])
    _same(
        jtorch.frombuffer(floats, dtype=jtorch.float32),
        torch.frombuffer(floats, dtype=torch.float32),
    )
    for kw in [dict(offset=13), dict(offset=-1), dict(count=4), dict(count=0), dict(offset=2)]:
        _raises(
            lambda: torch.frombuffer(raw, dtype=torch.int32, **kw),
            lambda: jtorch.frombuffer(raw, dtype=jtorch.int32, **kw),
        )
    _raises(
        lambda: torch.frombuffer([1, 2], dtype=torch.int32),
        lambda: jtorch.frombuffer([1, 2], dtype=jtorch.int32),
    )
    _raises(
        lambda: torch.frombuffer(bytearray(), dtype=torch.int32),
        lambda: jtorch.frombuffer(bytearray(), dtype=jtorch.int32),
    )


# ---------------------------------------------------------------------------
# Control flow


def test_cond_eager():
    w_t = torch.tensor([2.0, 3.0], requires_grad=True)
    w_j = jtorch.tensor([2.0, 3.0], requires_grad=True)
    for sign in (1.0, -1.0):
        for lib, w in ((torch, w_t), (jtorch, w_j)):
            x = lib.ones(2) * sign
            w.grad = None
            out = lib.cond(x.sum() > 0, lambda a, w=w: a * w, lambda a, w=w: a - w, (x,))
            out.sum().backward()
            if lib is torch:
                want, want_grad = out.detach().numpy(), w.grad.numpy()
            else:
                np.testing.assert_array_equal(np.asarray(out.detach()), want)
                np.testing.assert_array_equal(np.asarray(w.grad), want_grad)
    _raises(
        lambda: torch.cond(
            torch.tensor([True, False]), lambda a: a + 1, lambda a: a - 1, (torch.ones(1),)
        ),
        lambda: jtorch.cond(
            jtorch.tensor([True, False]), lambda a: a + 1, lambda a: a - 1, (jtorch.ones(1),)
        ),
    )


def test_while_loop_eager():
    def run(lib, carried):
        return lib.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * 2), carried)

    want = run(torch, (torch.tensor(0), torch.ones(2)))
    got = run(jtorch, (jtorch.tensor(0), jtorch.ones(2)))
    assert type(got) is type(want) and len(got) == 2
    for g, w in zip(got, want):
        _same(g, w)
    one_t = torch.while_loop(lambda i: i < 3, lambda i: i + 1, (torch.tensor(0),))
    one_j = jtorch.while_loop(lambda i: i < 3, lambda i: i + 1, (jtorch.tensor(0),))
    _same(one_j, one_t)
    assert jtorch.while_loop(lambda i: i < 3, lambda i: (i + 1,), (3,)) == torch.while_loop(
        lambda i: i < 3, lambda i: (i + 1,), (3,)
    )
