"""Custom `autograd.Function`s, hooks and anomaly mode, as PyTorch documents them."""

import warnings

import numpy as np
import pytest

import jtorch as torch
from tests.helpers import close


def leaf(values):
    return torch.tensor(values, requires_grad=True)


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, k):
        ctx.save_for_backward(a)
        ctx.k = k
        return a * a * k

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return 2 * a * ctx.k * g, None


# ---------------------------------------------------------------------------
# autograd.Function


def test_function_forward_backward_and_node():
    x = leaf([1.0, 2.0])
    y = Square.apply(x, 3.0)
    assert y.grad_fn.name() == "SquareBackward" and type(y.grad_fn).__name__ == "SquareBackward"
    assert y.grad_fn.next_functions[0][0].variable is x
    y.sum().backward()
    close(x.grad, [6, 12])
    assert not Square.apply(torch.tensor([1.0]), 2.0).requires_grad
    with torch.no_grad():
        assert Square.apply(x, 2.0).grad_fn is None


def test_function_saved_tensors_freed_and_modified():
    x = leaf([1.0, 2.0])
    y = Square.apply(x, 1.0)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
        _ = y.grad_fn.saved_tensors
    a = x * 1
    y = Square.apply(a, 1.0)
    a.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()

    class SavesNumber(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a, 3)
            return a

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(TypeError, match="save_for_backward can only save variables"):
        SavesNumber.apply(x)


def test_function_needs_input_grad_and_grad_mode():
    seen = []

    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, k):
            seen.append((ctx.needs_input_grad, torch.is_grad_enabled()))
            return a * b * k

        @staticmethod
        def backward(ctx, g):
            seen.append((ctx.needs_input_grad, torch.is_grad_enabled()))
            return g * 2, None, None

    x = leaf([1.0])
    F.apply(x, torch.tensor([2.0]), 3).sum().backward()
    assert seen == [((True, False, False), False)] * 2
    close(x.grad, [2])


def test_function_setup_context_and_multiple_outputs():
    class SinCos(torch.autograd.Function):
        @staticmethod
        def forward(a):
            return a.sin(), a.cos()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, gs, gc):
            (a,) = ctx.saved_tensors
            return gs * a.cos() - gc * a.sin()

    x = leaf([0.5, 1.0])
    s, c = SinCos.apply(x)
    assert s.grad_fn is c.grad_fn and (s.output_nr, c.output_nr) == (0, 1)
    (s * 2 + c * 3).sum().backward()
    close(x.grad, 2 * np.cos([0.5, 1.0]) - 3 * np.sin([0.5, 1.0]))


def test_function_materialize_grads():
    seen = []

    class Two(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, materialize):
            ctx.set_materialize_grads(materialize)
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append(None if g2 is None else g2.tolist())
            return g1 * 2, None

    for materialize in (True, False):
        x = leaf([1.0, 2.0])
        Two.apply(x, materialize)[0].sum().backward()
        close(x.grad, [2, 2])
    assert seen == [[0.0, 0.0], None]


def test_function_mark_non_differentiable_and_dirty():
    class Sort(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            v, i = a.sort()
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(i)
            return v, i

        @staticmethod
        def backward(ctx, gv, gi):
            (i,) = ctx.saved_tensors
            out = torch.zeros_like(gv)
            out[i] = gv
            return out

    x = leaf([3.0, 1.0, 2.0])
    v, i = Sort.apply(x)
    assert v.requires_grad and not i.requires_grad
    (v * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    close(x.grad, [3, 1, 2])

    class AddOne(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            a.add_(1)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            return g * 2

    y = leaf([1.0, 2.0]) * 1
    z = AddOne.apply(y)
    assert z is y and y.grad_fn.name() == "AddOneBackward" and y.tolist() == [2.0, 3.0]
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad has been used"):
        AddOne.apply(leaf([1.0]))


def test_function_returning_input_is_a_new_tensor():
    class Ident(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a

        @staticmethod
        def backward(ctx, g):
            return g * 5

    x = leaf([1.0, 2.0])
    y = Ident.apply(x)
    assert y is not x and x.is_leaf and y.grad_fn.name() == "IdentBackward"
    y.sum().backward()
    close(x.grad, [5, 5])


def test_function_double_backward_and_once_differentiable():
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a**3

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 3 * a * a * g

    x = leaf([1.0, 2.0])
    (g,) = torch.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    (g2,) = torch.autograd.grad(g.sum(), x)
    close(g2, [6, 12])

    class Once(Cube):
        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 3 * a * a * g

    (g,) = torch.autograd.grad(Once.apply(x).sum(), x, create_graph=True)
    close(g, [3, 12])
    assert not g.requires_grad


def test_function_grad_count_shape_and_type_errors():
    class Wrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return (a * b).sum()

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(
        RuntimeError, match="returned an incorrect number of gradients \\(expected 2, got 1\\)"
    ):
        Wrong.apply(leaf([1.0]), leaf([2.0])).backward()

    class Shape(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.sum()

        @staticmethod
        def backward(ctx, g):
            return torch.ones(2)

    with pytest.raises(RuntimeError, match="got \\[2\\] but expected shape compatible with"):
        Shape.apply(leaf([1.0, 2.0, 3.0])).backward()

    class Number(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.sum()

        @staticmethod
        def backward(ctx, g):
            return 3.0

    with pytest.raises(RuntimeError, match="expected Variable or None \\(got float\\)"):
        Number.apply(leaf([1.0])).backward()


def test_function_vjp_alias_and_legacy_call():
    class V(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def vjp(ctx, g):
            return g * 7

    x = leaf([1.0])
    V.apply(x).sum().backward()
    close(x.grad, [7])
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward"):
        V()(x)


# ---------------------------------------------------------------------------
# Hooks


def test_tensor_hooks_order_modify_and_remove():
    x = leaf([1.0, 2.0])
    y = x * 1
    log = []
    y.register_hook(lambda g: log.append(("a", g.tolist())) or g + 1)
    y.register_hook(lambda g: log.append(("b", g.tolist())) or g * 2)
    y.sum().backward()
    assert log == [("a", [1.0, 1.0]), ("b", [2.0, 2.0])]
    close(x.grad, [4, 4])
    x.grad = None
    h = x.register_hook(lambda g: g * 10)
    (x * 3).sum().backward()
    h.remove()
    (x * 3).sum().backward()
    close(x.grad, [33, 33])
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't"):
        torch.ones(1).register_hook(lambda g: g)


def test_hook_runs_once_on_summed_grad_and_before_retain_grad():
    x = leaf([1.0, 2.0])
    y = x * 2
    calls = []
    y.retain_grad()
    y.register_hook(lambda g: calls.append(g.tolist()) or g * 10)
    (y * y + y).sum().backward()
    assert calls == [[5.0, 9.0]]  # 2y + 1, once
    close(y.grad, [50, 90])  # retain_grad sees the hooked grad
    close(x.grad, [100, 180])


def test_post_accumulate_grad_hook():
    x = leaf([1.0, 2.0])
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    (x * 3).sum().backward()
    (x * x).sum().backward()
    assert seen == [[3.0, 3.0], [5.0, 7.0]]
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)
    x.register_post_accumulate_grad_hook(lambda t: 1)
    with pytest.raises(RuntimeError, match="post accumulate grad hooks should return None"):
        x.sum().backward()


def test_node_hooks():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    y = x * w
    seen = []
    y.grad_fn.register_hook(
        lambda gi, go: seen.append(([g.tolist() for g in gi], [g.tolist() for g in go]))
    )
    y.sum().backward()
    assert seen == [([[3.0, 4.0], [1.0, 2.0]], [[1.0, 1.0]])]
    x = leaf([1.0, 2.0])
    y = x * 2
    y.grad_fn.register_hook(lambda gi, go: (gi[0] * 0 + 1, None))
    y.sum().backward()
    close(x.grad, [1, 1])
    y = x * 2
    y.grad_fn.register_hook(lambda gi, go: (gi[0],) * 3)
    with pytest.raises(
        RuntimeError, match="has returned an incorrect number of values \\(got 3, but expected 2\\)"
    ):
        y.sum().backward()


def test_node_prehook():
    x = leaf([1.0, 2.0])
    y = x.exp()
    h = y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
    (y * 3).sum().backward(retain_graph=True)
    close(x.grad, 6 * np.exp([1.0, 2.0]), rtol=1e-5)
    h.remove()
    x.grad = None
    (y * 3).sum().backward()
    close(x.grad, 3 * np.exp([1.0, 2.0]), rtol=1e-5)


# ---------------------------------------------------------------------------
# Anomaly mode


NAN_MESSAGE = "Function 'SqrtBackward0' returned nan values in its 0th output."


def test_detect_anomaly_reports_nan():
    x = leaf([0.0, 1.0])
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        mode = torch.autograd.detect_anomaly()
    with mode, pytest.raises(RuntimeError) as err:
        (x.sqrt() * 0).sum().backward()
    assert str(err.value) == NAN_MESSAGE
    (x.sqrt() * 0).sum().backward()  # off again: nan passes silently
    assert np.isnan(x.grad.numpy()[0])


def test_set_detect_anomaly_and_check_nan():
    x = leaf([0.0])
    with torch.autograd.set_detect_anomaly(True):
        with pytest.raises(RuntimeError, match="returned nan values"):
            (x.sqrt() * 0).sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly(check_nan=False):
            (x.sqrt() * 0).sum().backward()
    assert np.isnan(x.grad.numpy()[0])


def test_anomaly_in_custom_function_and_repeated_graphs():
    class Bad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")

    x = leaf([1.0])
    with torch.autograd.set_detect_anomaly(True):
        with pytest.raises(RuntimeError, match="Function 'BadBackward' returned nan values"):
            Bad.apply(x).sum().backward()
    y = leaf([0.0, 1.0])
    for _ in range(3):  # a repeated graph may be run fused; not here
        (y.sqrt() * 0).sum().backward()
    with torch.autograd.set_detect_anomaly(True):
        with pytest.raises(RuntimeError, match="returned nan values"):
            (y.sqrt() * 0).sum().backward()
