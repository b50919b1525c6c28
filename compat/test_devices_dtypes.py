"""Parity for what libraries build models with: the meta device (shape-only tensors,
`with torch.device(...)`), `Tensor.view(dtype)` across element sizes, the float8 dtypes,
`torch.asarray`, and `torch.device` comparisons.

Each case is a string evaluated with `torch` bound to real PyTorch and then to jtorch; both
results are reduced to plain data (repr of meta tensors, values/dtype/shape/strides of real
ones, or the exception type and message) and compared.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402


def _plain(x):
    if isinstance(x, (torch.Tensor, jtorch.Tensor)):
        if x.is_meta:
            return ("meta", repr(x), tuple(x.shape), tuple(x.stride()), x.storage_offset())
        v = x.detach().float() if str(x.dtype).startswith("torch.float8") else x.detach()
        values = np.asarray(v.tolist(), dtype=object)
        values = [repr(e) for e in values.reshape(-1)]  # nan == nan here
        return (
            "tensor",
            values,
            str(x.dtype),
            tuple(x.shape),
            tuple(x.stride()),
            x.storage_offset(),
            x.requires_grad,
        )
    if isinstance(x, (torch.dtype, jtorch.dtype, torch.device, jtorch.device)):
        return repr(x)
    if isinstance(x, (tuple, list)):
        return tuple(_plain(v) for v in x)
    if isinstance(x, (torch.finfo, jtorch.finfo)):
        return repr(x)
    return x


def _run(lib, expr, setup):
    env = {"torch": lib, "np": np}
    try:
        exec(setup, env)
        return ("ok", _plain(eval(expr, env)))
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return ("raises", type(e).__name__, str(e).split("\n")[0])


META = "x = torch.ones(2, 3, device='meta')"
META_CASES = [
    "x",
    "x + 1",
    "x.long()",
    "x.sum()",
    "x.max()",
    "x.argmax()",
    "x == x",
    "x[0]",
    "x[:, 1:]",
    "x.view(6)",
    "x.t()",
    "x.t().is_contiguous()",
    "x.stride()",
    "x.device",
    "x.is_meta",
    "torch.empty_like(x)",
    "torch.empty_like(x, device='cpu').shape",
    "x.new_zeros(3)",
    "x.normal_()",
    "x[:, 1:].mul_(2)",
    "x.copy_(torch.zeros(2, 3))",
    "x.copy_(torch.ones(3))",
    "x + torch.tensor(2.)",
    "x.view(torch.uint8)",
    "torch.nn.functional.linear(x, torch.ones(4, 3, device='meta'))",
    "torch.nn.Parameter(x)",
    "x * torch.nn.Parameter(x)",
    "torch.randn(3, device='meta')",
    "torch.tensor([1, 2], device='meta')",
    "torch.zeros(0, 2, device='meta')",
    "torch.nn.Linear(2, 3, device='meta').weight",
    "torch.nn.Linear(2, 3).to('meta').bias",
    "torch.nn.Linear(2, 3, device='meta').to_empty(device='cpu').weight.shape",
    "torch.nn.Embedding(5, 2, device='meta')(torch.zeros(3, dtype=torch.long, device='meta'))",
    "torch.nn.LayerNorm(3, device='meta')(x)",
    "torch.softmax(x, -1)",
    "torch.cat([x, x], 1)",
    "x.expand(4, 2, 3)",
    "x.float().sum(0)",
    # errors
    "x.item()",
    "x[0, 0].item()",
    "x.tolist()",
    "x.numpy()",
    "x.cpu()",
    "x.to('cpu')",
    "torch.zeros(2, 3).copy_(x)",
    "torch.cat([x, torch.ones(2, 3)])",
    "x + torch.ones(3)",
    "torch.ones(3) + x",
    "bool(x)",
    "x.nonzero()",
]

CONTEXT_CASES = [
    (
        "with torch.device('meta'):\n    y = torch.tensor([1, 2]); z = torch.nn.Linear(2, 2); "
        "a = torch.arange(3); d = torch.get_default_device()",
        "(y, z.weight, a, d, torch.get_default_device(), torch.ones(1).device)",
    ),
    (
        "with torch.device('meta'):\n    with torch.device('cpu'):\n        y = torch.ones(2)\n"
        "    z = torch.ones(2)",
        "(y, z)",
    ),
    ("with torch.device('meta') as d:\n    pass", "d"),
    ("", "torch.device('cpu') == 'npu'"),
    ("", "torch.device('cpu') == 'cpu'"),
    ("", "torch.device('cuda:0') == 'cuda:1'"),
    ("", "[torch.device(t) for t in ('xpu', 'hpu', 'privateuseone', 'mps', 'lazy')]"),
    ("", "torch.device('npu')"),
]

VIEW = "x = torch.arange(12, dtype=torch.float32).reshape(3, 4)"
VIEW_CASES = [
    "x.view(torch.uint8)",
    "x.view(torch.float16)",
    "x.view(torch.int64)",
    "x.view(torch.float64).stride()",
    "x.view(dtype=torch.int32)",
    "x.view(torch.uint8).view(torch.float32)",
    "x[:, :3].view(torch.float64)",
    "x[:, 1:3].view(torch.float64)",
    "x.t().view(torch.uint8)",
    "x[:, 1:].view(torch.uint8)",
    "x[:, 2:].view(torch.int64)",
    "torch.tensor(1.).view(torch.uint8)",
    "torch.tensor(1.).view(torch.float64)",
    "x.view(torch.complex64)",
    "torch.zeros(3, 0).view(torch.float64)",
    "x.t().contiguous().t().view(torch.int16)",
    "x[:1].view(torch.float64)",
    "x[1].view(torch.uint8)",
    "x.view(torch.complex64).view(torch.float64)",
    "x.view(torch.bfloat16)[0]",
    "torch.tensor([True, False, True, True]).view(torch.int32)",
    "torch.tensor([1, 2], dtype=torch.int16).view(torch.bool)",
    "x.requires_grad_().view(torch.float16)",
]
VIEW_WRITE = (
    "z = torch.arange(8, dtype=torch.float32)\nv = z.view(torch.uint8)\n"
    "v[:4] = torch.tensor([0, 0, 128, 63], dtype=torch.uint8)"
)

F8 = (
    "v = torch.tensor([0., -0., 1e-40, 3.0, -3.0, 0.75, 6.0, 1e38, float('inf'), "
    "float('nan'), 447., 449., 464., 465., 480., -500.])"
)
F8_TYPES = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"]
F8_CASES = (
    [f"v.to(torch.{d})" for d in F8_TYPES]
    + [
        f"(torch.{d}.is_floating_point, torch.{d}.is_signed, torch.{d}.itemsize, "
        f"torch.finfo(torch.{d}))"
        for d in F8_TYPES
    ]
    + [
        "torch.tensor([1., 2.5, 300.]).to(torch.float8_e4m3fn).view(torch.uint8)",
        "torch.tensor([1, 300, -7]).to(torch.float8_e4m3fn)",
        "torch.zeros(2, dtype=torch.float8_e5m2)",
        "torch.tensor([1.0], dtype=torch.float8_e4m3fn)",
        "torch.cat([v.to(torch.float8_e5m2)] * 2)[3:6]",
        "v.to(torch.float8_e5m2).to(torch.bfloat16)",
        "torch.promote_types(torch.float8_e4m3fn, torch.float32)",
        "torch.promote_types(torch.float8_e4m3fn, torch.float8_e5m2)",
        "torch.promote_types(torch.float8_e5m2, torch.float8_e5m2)",
    ]
)

AS = "t = torch.arange(3.)"
ASARRAY_CASES = [
    "torch.asarray(t) is t",
    "torch.asarray(t, dtype=torch.float64)",
    "torch.asarray(t, dtype=torch.float64, copy=False)",
    "torch.asarray(t, copy=True) is t",
    "torch.asarray(t, copy=True)",
    "torch.asarray([1, 2, 3])",
    "torch.asarray([1., 2])",
    "torch.asarray(3.5)",
    "torch.asarray(np.arange(3, dtype=np.int32))",
    "torch.asarray(t.untyped_storage(), dtype=torch.float32)",
    "torch.asarray(np.float32(2.5))",
    "torch.asarray(bytearray(b'ab'), dtype=torch.uint8)",
    "torch.asarray([1, 2], requires_grad=True, dtype=torch.float32)",
    "torch.asarray(t, device='meta')",
    "torch.asarray([[1, 2], [3, 4]], dtype=torch.float16)",
    "torch.asarray(np.arange(4.))",
    "torch.asarray(np.arange(4.), dtype=torch.float32)",
]

PY = "t = torch.arange(3.)"
PYTHON_TYPE_CASES = [  # Python's scalar types where a dtype is expected
    "torch.zeros(2, dtype=float)",
    "torch.ones(2, dtype=int)",
    "torch.full((2,), 1, dtype=bool)",
    "torch.empty(2, dtype=complex).shape",
    "torch.tensor([1, 2], dtype=float)",
    "torch.arange(3, dtype=float)",
    "torch.tril(torch.ones((3, 3), dtype=bool))",
    "t.to(bool)",
    "t.to(int)",
    "t.to('cpu', float)",
    "t.to(dtype=int)",
    "t.to(int, copy=True)",
    "t.view(int)",
    "t.view(dtype=float)",
    "t.sum(dtype=float)",
    "t.new_zeros(2, dtype=int)",
    "torch.zeros_like(t, dtype=bool)",
    "torch.as_tensor([1], dtype=float)",
    "torch.nn.functional.softmax(t, 0, dtype=float).dtype",
    "t.type(float)",
    "t.type(int)",
    "torch.cumsum(t, 0, dtype=int)",
]

CASES = (
    [(META, c) for c in META_CASES]
    + [(PY, c) for c in PYTHON_TYPE_CASES]
    + CONTEXT_CASES
    + [(VIEW, c) for c in VIEW_CASES]
    + [(VIEW_WRITE, "z")]
    + [(F8, c) for c in F8_CASES]
    + [(AS, c) for c in ASARRAY_CASES]
)


@pytest.mark.parametrize("setup,expr", CASES, ids=[e for _, e in CASES])
def test_parity(setup, expr):
    expected = _run(torch, expr, setup)
    actual = _run(jtorch, expr, setup)
    if expected[0] == "raises" and actual[0] == "raises" and expr in _OWN_MESSAGE:
        assert actual[1] == expected[1]  # same exception type, jtorch's own words
        return
    assert actual == expected


# Errors whose type matches PyTorch's but whose words are jtorch's own (PyTorch's message
# names its internal fake-tensor registry).
_OWN_MESSAGE = {"x.nonzero()"}
