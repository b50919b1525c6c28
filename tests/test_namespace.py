"""Top-level namespace: constants, legacy tensor types, torch.testing, torch.accelerator,
small predicates and knobs, vander, frombuffer, cond and while_loop (eager and traced)."""

import math
import struct
import warnings

import numpy as np
import pytest

import jtorch
from tests.helpers import same


def test_constants():
    assert (jtorch.pi, jtorch.e, jtorch.inf) == (math.pi, math.e, math.inf)
    assert math.isnan(jtorch.nan) and jtorch.newaxis is None
    assert jtorch.zeros(3)[jtorch.newaxis].shape == (1, 3)
    assert repr(jtorch.channels_last_3d) == "torch.channels_last_3d"
    assert jtorch.ones(1, 2, 1, 1, 1).contiguous(memory_format=jtorch.channels_last_3d).shape == (
        1,
        2,
        1,
        1,
        1,
    )


# ---------------------------------------------------------------------------
# Legacy types


def test_legacy_types_construct_and_check():
    F = jtorch.FloatTensor
    assert repr(F) == "<class 'torch.FloatTensor'>" and F.dtype is jtorch.float32
    assert repr(jtorch.cuda.LongTensor) == "<class 'torch.cuda.LongTensor'>"
    assert not issubclass(F, jtorch.Tensor) and F.add is jtorch.Tensor.add
    x = F(2, 3)
    same(x, np.zeros((2, 3), np.float32), jtorch.float32)
    same(F([1, 2]), [1.0, 2.0], jtorch.float32)
    assert (
        F().shape == (0,) and F(jtorch.Size([4])).shape == (4,) and F(size=(1, 2)).shape == (1, 2)
    )
    same(jtorch.LongTensor([1.7, -2.7]), [1, -2], jtorch.int64)
    same(jtorch.BoolTensor([1, 0]), [True, False], jtorch.bool)
    assert jtorch.HalfTensor(1).dtype is jtorch.float16
    assert jtorch.BFloat16Tensor(1).dtype is jtorch.bfloat16
    assert isinstance(x, F) and isinstance(jtorch.nn.Parameter(x), F)
    assert not isinstance(x, jtorch.DoubleTensor) and not isinstance(x, jtorch.cuda.FloatTensor)
    assert isinstance(jtorch.ones(1, dtype=jtorch.uint8), jtorch.ByteTensor)
    assert not isinstance(np.zeros(1, np.float32), F)
    # A tensor of the same type is aliased, as PyTorch does.
    base = jtorch.ones(2)
    F(base)[0] = 5.0
    same(base, [5.0, 1.0])


@pytest.mark.parametrize(
    "args,kwargs,exc,msg",
    [
        ((2.5,), {}, TypeError, r"data must be a sequence \(got float\)"),
        (("a",), {}, TypeError, "invalid data type 'str'"),
        ((-1,), {}, RuntimeError, "negative dimension -1"),
        ((2, "a"), {}, TypeError, "failed to unpack the object at pos 2"),
        (([1], [2]), {}, TypeError, r"invalid combination of arguments - got \(list, list\)"),
        (([1],), {"dtype": jtorch.float64}, TypeError, r"got \(list, dtype=torch.dtype\)"),
        ((2,), {"device": "cuda"}, RuntimeError, "expects device type: cpu"),
    ],
)
def test_legacy_constructor_errors(args, kwargs, exc, msg):
    with pytest.raises(exc, match=msg):
        jtorch.FloatTensor(*args, **kwargs)


def test_legacy_alias_needs_same_dtype():
    with pytest.raises(TypeError, match="dtype=float, .*got TensorOptions\\(dtype=long int"):
        jtorch.FloatTensor(jtorch.ones(1, dtype=jtorch.int64))


def test_type_conversions_with_legacy_types():
    x = jtorch.tensor([1.5, -2.5])
    same(x.type(jtorch.LongTensor), [1, -2], jtorch.int64)
    assert x.type("torch.DoubleTensor").dtype is jtorch.float64
    assert x.type(jtorch.IntTensor).type() == "torch.IntTensor"


def test_set_default_tensor_type():
    try:
        with pytest.warns(UserWarning, match="set_default_tensor_type\\(\\) is deprecated"):
            jtorch.set_default_tensor_type(jtorch.DoubleTensor)
        assert jtorch.get_default_dtype() is jtorch.float64
        assert jtorch.tensor([1.0]).dtype is jtorch.float64
        with pytest.warns(UserWarning):
            jtorch.set_default_tensor_type("torch.FloatTensor")
        assert jtorch.get_default_dtype() is jtorch.float32
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(TypeError, match="^only floating-point types"):
                jtorch.set_default_tensor_type(jtorch.LongTensor)
            with pytest.raises(TypeError, match="^invalid type object"):
                jtorch.set_default_tensor_type(jtorch.float64)
    finally:
        jtorch.set_default_dtype(jtorch.float32)


# ---------------------------------------------------------------------------
# torch.testing


def _message(fn) -> str:
    with pytest.raises(AssertionError) as info:
        fn()
    return str(info.value)


def test_assert_close_passes_within_default_tolerances():
    jtorch.testing.assert_close(jtorch.tensor([1.0, 2.0]), jtorch.tensor([1.0, 2.0 + 1e-6]))
    jtorch.testing.assert_close(1.0, 1.0 + 1e-8)
    jtorch.testing.assert_close({"a": [jtorch.ones(2), 3]}, {"a": [jtorch.ones(2), 3]})
    jtorch.testing.assert_close(np.array([1.0, 2.0]), np.array([1.0, 2.0]))
    jtorch.testing.assert_close(
        jtorch.tensor([math.nan]), jtorch.tensor([math.nan]), equal_nan=True
    )
    jtorch.testing.assert_close(jtorch.nn.Parameter(jtorch.ones(2)), jtorch.ones(2))


def test_assert_close_message_layout():
    # The example in PyTorch's assert_close documentation.
    expected = jtorch.tensor([1.0, 2.0, 3.0])
    actual = jtorch.tensor([1.0, 4.0, 5.0])
    msg = _message(
        lambda: jtorch.testing.assert_close(
            actual, expected, msg=lambda m: f"Header\n\n{m}\n\nFooter"
        )
    )
    assert msg == (
        "Header\n\nTensor-likes are not close!\n\n"
        "Mismatched elements: 2 / 3 (66.7%)\n"
        "Greatest absolute difference: 2.0 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 1.0 at index (1,) (up to 1.3e-06 allowed)"
        "\n\nFooter"
    )
    assert _message(lambda: jtorch.testing.assert_close(actual, expected, msg="Argh")) == "Argh"
    ints = _message(
        lambda: jtorch.testing.assert_close(
            jtorch.tensor([[1, 2], [3, 4]]), jtorch.tensor([[1, 2], [3, 8]])
        )
    )
    assert ints == (
        "Tensor-likes are not equal!\n\nMismatched elements: 1 / 4 (25.0%)\n"
        "Greatest absolute difference: 4 at index (1, 1)\n"
        "Greatest relative difference: 0.5 at index (1, 1)"
    )
    scalar = _message(lambda: jtorch.testing.assert_close(1.0, 1.5))
    assert scalar == (
        "Scalars are not close!\n\nExpected 1.5 but got 1.0.\n"
        "Absolute difference: 0.5 (up to 1e-07 allowed)\n"
        "Relative difference: 0.3333333333333333 (up to 1e-07 allowed)"
    )


def test_assert_close_attribute_and_structure_errors():
    ac = jtorch.testing.assert_close
    assert _message(lambda: ac(jtorch.ones(2), jtorch.ones(3))) == (
        "The values for attribute 'shape' do not match: torch.Size([2]) != torch.Size([3])."
    )
    assert "'dtype' do not match: torch.float32 != torch.float64" in _message(
        lambda: ac(jtorch.ones(2), jtorch.ones(2, dtype=jtorch.float64))
    )
    ac(jtorch.ones(2), jtorch.ones(2, dtype=jtorch.float64), check_dtype=False)
    assert "'stride()' do not match: (1, 2) != (2, 1)" in _message(
        lambda: ac(jtorch.ones(2, 2).t(), jtorch.ones(2, 2), check_stride=True)
    )
    assert _message(lambda: ac([jtorch.ones(1)], [jtorch.ones(1), 1])) == (
        "The length of the sequences mismatch: 1 != 2"
    )
    assert _message(lambda: ac({"a": 1}, {"a": 2})).endswith("The failure occurred for item ['a']")
    with pytest.raises(TypeError, match="No comparison pair was able to handle inputs"):
        ac(np.ones(1), jtorch.ones(1))
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol' must be either specified"):
        ac(jtorch.ones(1), jtorch.ones(1), rtol=0.1)


def test_assert_allclose_is_deprecated_and_looser():
    with pytest.warns(FutureWarning, match="assert_allclose\\(\\)` is deprecated"):
        jtorch.testing.assert_allclose(jtorch.tensor([1.0, 2.0]), [1.0, 2.0001])


def test_make_tensor_ranges_and_flags():
    mt = jtorch.testing.make_tensor
    x = mt((2, 60), dtype=jtorch.float32, device="cpu")
    v = np.asarray(x)
    assert x.shape == (2, 60) and v.min() >= -9 and v.max() < 9
    i = np.asarray(mt((2, 60), dtype=jtorch.int64, device="cpu", low=-2, high=2, exclude_zero=True))
    assert set(i.ravel().tolist()) <= {-2, -1, 1}
    n = mt(2, 3, dtype=jtorch.float64, device="cpu", noncontiguous=True, requires_grad=True)
    assert n.shape == (2, 3) and not n.is_contiguous() and n.requires_grad
    with pytest.raises(ValueError, match="`requires_grad=True` is not supported"):
        mt(2, dtype=jtorch.int32, device="cpu", requires_grad=True)
    with pytest.raises(ValueError, match="`low` must be less than `high`"):
        mt(2, dtype=jtorch.float32, device="cpu", low=1, high=0)
    with pytest.raises(TypeError, match="is not supported by torch.testing.make_tensor"):
        mt(2, dtype="float32", device="cpu")


# ---------------------------------------------------------------------------
# torch.accelerator


def test_accelerator_without_one():
    if jtorch.cuda.is_available():
        pytest.skip("an accelerator is present")
    acc = jtorch.accelerator
    assert acc.current_accelerator() is None and not acc.is_available()
    assert acc.device_count() == 0
    # PyTorch's quickstart tutorial.
    device = acc.current_accelerator().type if acc.is_available() else "cpu"
    assert device == "cpu"
    with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
        acc.current_device_index()
    with pytest.raises(RuntimeError, match="Accelerator expected"):
        acc.set_device_index("cpu")
    with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
        acc.synchronize()
    acc.set_device_index(-1)  # a negative index is a no-op


# ---------------------------------------------------------------------------
# Small functions


def test_predicates_and_knobs():
    x = jtorch.ones(2)
    assert jtorch.is_same_size(x, jtorch.zeros(2)) and not jtorch.is_same_size(x, jtorch.ones(3))
    assert jtorch.is_signed(x) and not jtorch.is_signed(jtorch.ones(1, dtype=jtorch.uint8))
    assert jtorch.get_device(x) == -1 and jtorch.is_inference(x) is False
    with pytest.raises(TypeError, match="argument 'other' \\(position 2\\) must be Tensor"):
        jtorch.is_same_size(x, 3)
    jtorch.set_num_interop_threads(3)
    assert jtorch.get_num_interop_threads() == 3
    with pytest.raises(RuntimeError, match="expects a positive integer"):
        jtorch.set_num_interop_threads(0)
    # XLA's CPU kernels flush denormals: on is honoured, off is not.
    assert jtorch.set_flush_denormal(True) is True and jtorch.set_flush_denormal(False) is False
    jtorch.set_warn_always(True)
    assert jtorch.is_warn_always_enabled()
    jtorch.set_warn_always(False)
    jtorch.set_anomaly_enabled(True, check_nan=False)
    assert jtorch.is_anomaly_enabled() and not jtorch.is_anomaly_check_nan_enabled()
    assert jtorch.autograd.anomaly_mode.is_anomaly_enabled()
    jtorch.set_anomaly_enabled(False)
    assert not jtorch.is_anomaly_enabled() and jtorch.is_anomaly_check_nan_enabled()
    try:
        jtorch.set_deterministic_debug_mode("warn")
        assert jtorch.get_deterministic_debug_mode() == 1
        assert jtorch.is_deterministic_algorithms_warn_only_enabled()
        jtorch.set_deterministic_debug_mode(2)
        assert jtorch.are_deterministic_algorithms_enabled()
        with pytest.raises(RuntimeError, match="expected 0, 1, or 2, but got 3"):
            jtorch.set_deterministic_debug_mode(3)
    finally:
        jtorch.set_deterministic_debug_mode(0)
    assert jtorch.get_device_module("cpu") is jtorch.cpu
    assert jtorch.get_device_module("cuda:0") is jtorch.cuda
    assert jtorch.compiled_with_cxx11_abi() is True and jtorch.has_lapack


def test_sym_helpers():
    assert jtorch.sym_int(-2.7) == -2 and jtorch.sym_float(3) == 3.0
    assert jtorch.sym_max(1, 2.0) == 2.0 and type(jtorch.sym_max(1, 2.0)) is float
    assert type(jtorch.sym_min(1, 2)) is int and jtorch.sym_not(0) is True
    assert jtorch.sym_ite(False, 1, 2) == 2 and jtorch.sym_sqrt(9) == 3.0
    assert jtorch.sym_sum([1, 2, 3]) == 6 == jtorch.sym_sum(1, 2, 3)
    with pytest.raises(AssertionError, match="type mismatch"):
        jtorch.sym_ite(True, 1, 2.0)


def test_vmap_alias():
    assert jtorch.vmap is jtorch.func.vmap


def test_vander_values_and_grad():
    x = jtorch.tensor([1.0, 2.0, 3.0])
    same(jtorch.vander(x), [[1, 1, 1], [4, 2, 1], [9, 3, 1]], jtorch.float32)
    same(jtorch.vander(x, N=2, increasing=True), [[1, 1], [1, 2], [1, 3]])
    assert jtorch.vander(x, 0).shape == (3, 0)
    same(
        jtorch.vander(jtorch.tensor([2, 3], dtype=jtorch.int32), 3),
        [[4, 2, 1], [9, 3, 1]],
        jtorch.int64,
    )
    g = jtorch.tensor([1.0, 2.0, 3.0], dtype=jtorch.float64, requires_grad=True)
    jtorch.vander(g, 3).sum().backward()  # d/dx (x^2 + x + 1) = 2x + 1
    same(g.grad, [3.0, 5.0, 7.0])
    # N <= 1: all ones (or no column), not computed from x, so no grad_fn (PyTorch's too)
    for v in (jtorch.vander(g, 1), jtorch.vander(g, 0), jtorch.vander(g[:1])):
        assert not v.requires_grad and v.grad_fn is None
    assert jtorch.vander(g, 2, increasing=True).grad_fn.name() == "torch::autograd::CopySlices"
    with pytest.raises(RuntimeError, match="x must be a one-dimensional tensor."):
        jtorch.vander(jtorch.ones(2, 2))
    with pytest.raises(RuntimeError, match="N must be non-negative."):
        jtorch.vander(x, -1)


def test_frombuffer():
    raw = bytearray(struct.pack("<3i", 1, 2, 3))
    same(jtorch.frombuffer(raw, dtype=jtorch.int32), [1, 2, 3], jtorch.int32)
    same(jtorch.frombuffer(raw, dtype=jtorch.int32, count=2, offset=4), [2, 3])
    same(jtorch.frombuffer(raw, dtype=jtorch.int16, offset=2), [0, 2, 0, 3, 0], jtorch.int16)
    f = jtorch.frombuffer(struct.pack("<2f", 1.5, -2.0), dtype=jtorch.float32, requires_grad=True)
    same(f.detach(), [1.5, -2.0])
    assert f.requires_grad and f.is_leaf
    # jtorch copies the buffer (documented): later writes do not show.
    t = jtorch.frombuffer(raw, dtype=jtorch.uint8)
    raw[0] = 9
    assert int(t[0]) == 1
    with pytest.raises(ValueError, match="must be a multiple of element size \\(4\\)"):
        jtorch.frombuffer(raw, dtype=jtorch.int32, offset=2)
    with pytest.raises(ValueError, match="must not be greater than actual buffer length"):
        jtorch.frombuffer(raw, dtype=jtorch.int32, count=4)
    with pytest.raises(ValueError, match="does not implement Python buffer protocol"):
        jtorch.frombuffer([1, 2], dtype=jtorch.int32)


# ---------------------------------------------------------------------------
# cond / while_loop


def test_cond_eager_and_grad():
    w = jtorch.tensor([2.0, 3.0], requires_grad=True)

    def f(x):
        return jtorch.cond(x.sum() > 0, lambda a: a * w, lambda a: a - w, (x,))

    same(f(jtorch.ones(2)).detach(), [2.0, 3.0])
    f(-jtorch.ones(2)).sum().backward()
    same(w.grad, [-1.0, -1.0])
    same(jtorch.cond(False, lambda: jtorch.ones(1), lambda: jtorch.zeros(1)), [0.0])
    with pytest.raises(RuntimeError, match="single-element tensor"):
        jtorch.cond(jtorch.tensor([True, False]), lambda: 1, lambda: 2)


class _Branchy(jtorch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = jtorch.nn.Parameter(jtorch.tensor([2.0, 3.0]))

    def forward(self, x):
        return jtorch.cond(x.sum() > 0, lambda a: a * self.w, lambda a: a - self.w, (x,))


def test_cond_traced():
    m = _Branchy()
    cm = jtorch.compile(m)
    x = jtorch.ones(2)
    cm(-x).sum().backward()  # traced with autograd: both branches, then `where`
    same(m.w.grad, [-1.0, -1.0])
    with jtorch.no_grad():  # traced without autograd: jax.lax.cond
        same(cm(x), [2.0, 3.0])
        same(cm(-x), [-3.0, -4.0])
    batched = jtorch.vmap(lambda p, a: jtorch.cond(p, lambda b: b + 1, lambda b: b - 1, (a,)))
    same(batched(jtorch.tensor([True, False]), jtorch.zeros(2)), [1.0, -1.0])
    # d/da of sum(a^2) at a = 1 is 2 per element.
    g = jtorch.func.grad(
        lambda a: jtorch.cond(a.sum() > 0, lambda b: (b * b).sum(), lambda b: b.sum(), (a,))
    )
    same(g(jtorch.ones(2)), [2.0, 2.0])


def test_while_loop_eager_and_traced():
    def body(i, s):
        return i + 1, s * 2

    i, s = jtorch.while_loop(lambda i, s: i < 3, body, (jtorch.tensor(0), jtorch.ones(2)))
    same(i, 3)
    same(s, [8.0, 8.0])
    assert jtorch.while_loop(lambda i: i < 3, lambda i: (i + 1,), (5,)) == (5,)
    cg = jtorch.compile(
        lambda n, s: jtorch.while_loop(lambda i, s: i < n, body, (jtorch.tensor(0), s))
    )
    i, s = cg(jtorch.tensor(4), jtorch.ones(2))
    same(s, [16.0, 16.0])
    i, s = cg(jtorch.tensor(2), jtorch.ones(2))
    same(i, 2)
    assert cg.trace_count == 1  # the trip count is data, not part of the program


def test_backends_cuda_attention_queries():
    import jtorch.backends.cuda as bc

    q = jtorch.ones(1, 2, 4, 8)
    p = bc.SDPAParams(q, q, q, None, 0.1, True, False)
    assert (p.dropout, p.is_causal, p.enable_gqa) == (0.1, True, False)
    # No fused CUDA attention kernels: every query answers no, as a build without them.
    assert not any(
        f(p)
        for f in (
            bc.can_use_flash_attention,
            bc.can_use_efficient_attention,
            bc.can_use_cudnn_attention,
        )
    )
    assert bc.is_flash_attention_available() is False
