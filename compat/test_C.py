"""`torch._C` parity: the names libraries read, answering as PyTorch's CPU build does."""

import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - the exception type is what is compared
        return (type(e).__name__, str(e).split("\n")[0])


def _same(fn):
    want, got = _outcome(lambda: fn(torch)), _outcome(lambda: fn(jtorch))
    assert str(got) == str(want)


@pytest.mark.parametrize(
    "case",
    [
        lambda L: L._C._get_accelerator(),
        lambda L: L._C._get_default_device(),
        lambda L: L._C._get_privateuse1_backend_name(),
        lambda L: L._C._get_tracing_state(),
        lambda L: L._C._log_api_usage_once("library.x"),
        lambda L: L._C._log_api_usage_once(1),
        lambda L: L._C._get_cudnn_enabled(),
        lambda L: L._C._get_mkldnn_enabled(),
        lambda L: L._C._get_float32_matmul_precision(),
        lambda L: L._C._get_deterministic_algorithms(),
        lambda L: L._C._is_torch_function_enabled(),
        lambda L: L._C._jit_is_script_object(L.ones(1)),
        lambda L: L._C.Value(),
        lambda L: [
            hasattr(L._C, n)
            for n in (
                "_cuda_getDeviceCount",
                "_cuda_isInBadFork",
                "_cuda_clearCublasWorkspaces",
                "_nn",
                "_functions",
                "ScriptFunction",
                "Graph",
                "DisableTorchFunction",
            )
        ],
        lambda L: (
            L._C.Generator is L.Generator,
            L._C.Size is L.Size,
            L._C.dtype is L.dtype,
            L._C.device is L.device,
            isinstance(L.ones(1), L._C.TensorBase),
            issubclass(L.Tensor, L._C.TensorBase),
            isinstance(L.Tensor, L._C._TensorMeta),
            L._C.ScriptModule is L.ScriptModule,
            L._C.ScriptFunction is L.jit.ScriptFunction,
            L._C.default_generator is L.default_generator,
        ),
    ],
    ids=lambda c: c.__code__.co_consts[0] if False else None,
)
def test_names(case):
    _same(case)


@pytest.mark.parametrize(
    "args,kwargs",
    [
        (("cpu",), {}),
        (("cpu", "float16"), {}),
        ((), {"dtype": "int32", "non_blocking": True}),
        (("float64",), {}),
        (("cpu", "float16", True), {}),
        ((), {"device": "cpu", "copy": True}),
        (("tensor",), {}),
        ((), {"memory_format": "channels_last"}),
        (("cpu", "x"), {}),
        ((), {"bogus": 1}),
    ],
)
def test_parse_to(args, kwargs):
    def conv(L, v):
        if v == "tensor":
            return L.zeros(2, dtype=L.float64)
        if v in ("float16", "int32", "float64", "channels_last"):
            return getattr(L, v)
        return v

    def run(L):
        a = tuple(conv(L, v) for v in args)
        k = {n: conv(L, v) for n, v in kwargs.items()}
        return L._C._nn._parse_to(*a, **k)

    want, got = _outcome(lambda: run(torch)), _outcome(lambda: run(jtorch))
    assert got[0] == want[0]
    if want[0] == "ok":
        assert str(got[1]) == str(want[1])


def test_set_grad_enabled():
    for L in (torch, jtorch):
        L._C._set_grad_enabled(False)
        off = L.is_grad_enabled()
        L._C._set_grad_enabled(True)
        assert (off, L.is_grad_enabled()) == (False, True)
    _same(lambda L: L._C._set_grad_enabled(1))


def test_tracing_state_during_trace():
    def run(L):
        seen = []

        def f(x):
            seen.append(L._C._get_tracing_state() is not None)
            return x * 2

        L.jit.trace(f, (L.ones(2),))
        return seen[0]

    assert run(jtorch) == run(torch)
