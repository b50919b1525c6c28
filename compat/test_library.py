"""`torch.library` / `torch.ops` parity: custom ops (schemas, kernels per device, autograd
formulas, fake kernels), Library define/impl, ATen packets, and their errors."""

import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402

_ids = itertools.count()


def _ns(tag):
    return f"jtcompat_{tag}_{next(_ids)}"


def _outcome(fn):
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 - exception type and first line compared
        return (type(e).__name__, str(e).split(". ")[0])
    return ("ok", out)


def _arr(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t).tolist()


def _custom_op_scenario(L, ns):
    Tensor = L.Tensor

    @L.library.custom_op(f"{ns}::scale", mutates_args=())
    def scale(x: Tensor, k: float = 2.0) -> Tensor:
        return x * k

    def setup(ctx, inputs, output):
        ctx.k = inputs[1]

    def backward(ctx, g):
        return g * ctx.k, None

    out = [
        str(scale._opoverload._schema),
        getattr(L.ops, ns).scale.overloads(),
        getattr(L.ops, ns).scale.default.name(),
        str(getattr(L.ops, ns).scale),
        str(getattr(L.ops, ns).scale.default),
        getattr(L.ops, ns).scale.default.__name__,
    ]
    x = L.tensor([1.0, 2.0], requires_grad=True)
    y = getattr(L.ops, ns).scale(x, 3.0)
    out.append((_arr(y), y.requires_grad, type(y.grad_fn).__name__))
    out.append(_outcome(lambda: y.sum().backward())[0])
    scale.register_autograd(backward, setup_context=setup)
    x2 = L.tensor([1.0, 2.0], requires_grad=True)
    scale(x2, k=4.0).sum().backward()
    out.append(_arr(x2.grad))
    out.append(_outcome(lambda: _arr(scale(L.ones(1), 1.0, 2.0))))
    out.append(_outcome(lambda: _arr(scale(L.ones(1), q=1))))
    return out


def test_custom_op_and_autograd():
    ns = _ns("op")
    assert _custom_op_scenario(jtorch, ns) == _custom_op_scenario(torch, ns)


@pytest.mark.parametrize("sig", ["tensor_ops", "lists", "mutates", "tuple_ret", "optional"])
def test_infer_schema(sig):
    def run(L):
        T = L.Tensor
        fns = {
            "tensor_ops": (lambda x, y, z=1: None, {"x": T, "y": T, "z": int, "return": T}),
            "lists": (
                lambda x, sizes, scales: None,
                {"x": list[T], "sizes": list[int], "scales": list[float], "return": T},
            ),
            "mutates": (lambda x, out: None, {"x": T, "out": T, "return": None}),
            "tuple_ret": (
                lambda x, flag=False: None,
                {"x": T, "flag": bool, "return": tuple[T, T]},
            ),
            "optional": (
                lambda x, w=None, name="a", dt=None: None,
                {"x": T, "w": T | None, "name": str, "dt": L.dtype | None, "return": T},
            ),
        }
        fn, ann = fns[sig]
        fn.__annotations__ = ann
        return L.library.infer_schema(fn, mutates_args={"out"} if sig == "mutates" else ())

    assert _outcome(lambda: run(jtorch)) == _outcome(lambda: run(torch))


def test_infer_schema_errors():
    def run(L):
        def f(x):
            return x

        return L.library.infer_schema(f, mutates_args=())

    assert _outcome(lambda: run(jtorch)) == _outcome(lambda: run(torch))


def test_aliasing_output_rejected():
    def run(L, ns):
        @L.library.custom_op(f"{ns}::same", mutates_args=())
        def same(x: L.Tensor) -> L.Tensor:
            return x

        return same(L.ones(1))

    ns = _ns("alias")
    want, got = _outcome(lambda: run(torch, ns)), _outcome(lambda: run(jtorch, ns))
    assert got[0] == want[0] == "RuntimeError"


def test_library_define_impl():
    def run(L, ns):
        lib = L.library.Library(ns, "DEF")
        out = [lib.define("twice(Tensor x, *, float k=2.) -> Tensor") is not None]
        lib.impl("twice", lambda x, *, k=2.0: x * k, "CompositeExplicitAutograd")
        op = getattr(L.ops, ns).twice
        out.append(_arr(op(L.ones(2))))
        out.append(_arr(op(L.ones(2), k=3.0)))
        out.append(str(op.default._schema))
        out.append(_outcome(lambda: lib.define("twice(Tensor x) -> Tensor"))[0])
        out.append(_outcome(lambda: L.library.Library(ns, "DEF"))[0])
        lib.define("noimpl(Tensor x) -> Tensor")
        out.append(_outcome(lambda: getattr(L.ops, ns).noimpl(L.ones(1)))[0])
        out.append(_outcome(lambda: getattr(L.ops, ns).missing)[0])
        L.library.define(f"{ns}::plus", "(Tensor x, Tensor y) -> Tensor", lib=lib)

        @L.library.impl(f"{ns}::plus", "cpu", lib=lib)
        def plus(x, y):
            return x + y

        out.append(_arr(getattr(L.ops, ns).plus(L.ones(1), L.ones(1))))
        lib._destroy()
        return out

    ns = _ns("lib")
    assert run(jtorch, ns) == run(torch, ns)


def test_parse_schema():
    text = (
        "foo::bar.out(Tensor(a!) x, int[2] y=[1, 2], *, Scalar? s=None, "
        'ScalarType? dtype=None, str mode="mean", float eps=1e-05) -> Tensor(a!)'
    )

    def run(L):
        s = L._C.parse_schema(text)
        return [
            str(s),
            s.name,
            s.overload_name,
            [(a.name, str(a.type), a.default_value, a.kwarg_only) for a in s.arguments],
            [str(r.type) for r in s.returns],
        ]

    assert run(jtorch) == run(torch)


@pytest.mark.parametrize(
    "call",
    [
        lambda L: L.ops.aten.add.Tensor(L.ones(2), L.ones(2), alpha=2),
        lambda L: L.ops.aten.add(L.ones(2), 3),
        lambda L: L.ops.aten.slice.Tensor(L.arange(10), 0, 2, 8, 3),
        lambda L: L.ops.aten.view(L.arange(6), [2, 3]),
        lambda L: L.ops.aten._to_copy(L.arange(3), dtype=L.float64),
        lambda L: L.ops.aten.sym_size.int(L.ones(2, 5), 1),
        lambda L: L.ops.aten.where.self(L.tensor([True, False]), L.ones(2), L.zeros(2)),
        lambda L: L.ops.aten.unsqueeze.default(L.ones(2), 0),
        lambda L: L.ops.aten.sum.dim_IntList(L.ones(2, 3), [1]),
    ],
)
def test_aten_calls(call):
    want, got = call(torch), call(jtorch)
    assert str(got.dtype) == str(want.dtype) if hasattr(want, "dtype") else True
    assert _arr(got) == _arr(want)


def test_aten_packet_names():
    def run(L):
        p = L.ops.aten.add
        return [
            str(p),
            str(p.Tensor),
            p.Tensor.name(),
            p.default.name(),
            type(p).__name__,
            _outcome(lambda: L.ops.aten.not_an_op)[0],
        ]

    assert run(jtorch) == run(torch)
