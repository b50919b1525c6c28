"""`torch.library` and `torch.ops` (PyTorch's documented custom-op behaviour)."""

import itertools

import pytest

import jtorch as torch
from jtorch import Tensor

_ids = itertools.count()


def _ns():
    return f"jttest_{next(_ids)}"


def test_custom_op_with_schema_fake_and_autograd():
    # The way transformers registers its grouped-mm fallback.
    ns = _ns()

    def mm(a, b):
        return a @ b

    torch.library.custom_op(
        f"{ns}::mm", mm, mutates_args=(), schema="(Tensor a, Tensor b) -> Tensor"
    )
    torch.library.register_fake(f"{ns}::mm", lambda a, b: torch.empty(a.shape[0], b.shape[1]))

    def setup(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g @ b.T, a.T @ g

    torch.library.register_autograd(f"{ns}::mm", backward, setup_context=setup)
    a = torch.tensor([[1.0, 2.0]], requires_grad=True)
    b = torch.tensor([[3.0], [4.0]], requires_grad=True)
    out = getattr(torch.ops, ns).mm(a, b)
    assert out.tolist() == [[11.0]]
    out.sum().backward()
    assert a.grad.tolist() == [[3.0, 4.0]] and b.grad.tolist() == [[1.0], [2.0]]
    with pytest.raises(RuntimeError, match="already has an fake impl"):
        torch.library.register_fake(f"{ns}::mm", lambda a, b: a)


def test_kernels_per_device_and_missing_backend():
    ns = _ns()

    @torch.library.custom_op(f"{ns}::f", mutates_args=(), device_types="cuda")
    def f(x: Tensor) -> Tensor:
        return x + 1

    with pytest.raises(NotImplementedError, match="from the 'CPU' backend"):
        f(torch.ones(1))
    f.register_kernel("cpu")(lambda x: x + 2)
    assert f(torch.ones(1)).item() == 3.0


def test_no_autograd_formula_fails_at_backward():
    ns = _ns()

    @torch.library.custom_op(f"{ns}::g", mutates_args=())
    def g(x: Tensor) -> Tensor:
        return x * 2

    y = g(torch.ones(2, requires_grad=True))
    assert y.requires_grad and type(y.grad_fn).__name__.startswith("GeneratedBackwardFor_")
    with pytest.raises(RuntimeError, match="no autograd formula was registered"):
        y.sum().backward()


def test_infer_schema_text():
    def f(
        x: Tensor, sizes: list[int], out: Tensor, k: float = 2.0, *, name: str = "a"
    ) -> tuple[Tensor, Tensor]:
        raise AssertionError

    assert torch.library.infer_schema(f, mutates_args={"out"}) == (
        '(Tensor x, SymInt[] sizes, Tensor(a2!) out, float k=2., *, str name="a") -> '
        "(Tensor, Tensor)"
    )


def test_library_lifecycle():
    ns = _ns()
    lib = torch.library.Library(ns, "DEF")
    lib.define("neg(Tensor x) -> Tensor")
    lib.impl("neg", lambda x: -x, "CompositeImplicitAutograd")
    x = torch.ones(1, requires_grad=True)
    getattr(torch.ops, ns).neg(x).sum().backward()  # autograd through the composite
    assert x.grad.item() == -1.0
    with pytest.raises(RuntimeError, match="Only a single TORCH_LIBRARY"):
        torch.library.Library(ns, "DEF")
    lib._destroy()
    with pytest.raises(AttributeError):
        _ = getattr(torch.ops, ns).neg


def test_aten_namespace():
    assert torch.ops.aten.mul.Tensor(torch.ones(2), 3).tolist() == [3.0, 3.0]
    assert torch.ops.aten.slice(torch.arange(6), 0, 1, 5, 2).tolist() == [1, 3]
    assert str(torch.ops.aten.mul.Tensor) == "aten.mul.Tensor"
    with pytest.raises(AttributeError, match="has no attribute 'nonexistent_op'"):
        _ = torch.ops.aten.nonexistent_op


def test_load_library_says_it_cannot():
    with pytest.raises(RuntimeError, match="cannot load compiled"):
        torch.ops.load_library("libfoo.so")
