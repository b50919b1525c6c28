"""The tape: leaves, backward, autograd.grad, graph lifetime, in-place ops, grad modes.

Expected values come from calculus (d/dx sum(x^2) = 2x, ...) and PyTorch's documented
behaviour (which errors, with which messages).
"""

import threading

import numpy as np
import pytest

import jtorch as torch
from tests.helpers import close

X = np.array([0.5, -1.25, 2.0], dtype=np.float32)
MODIFIED = "one of the variables needed for gradient computation has been modified by an inplace"
FREED = "Trying to backward through the graph a second time"


def leaf(values=X, dtype=None):
    return torch.tensor(np.asarray(values).tolist(), dtype=dtype, requires_grad=True)


def grad_of(f, values=X):
    x = leaf(values)
    f(x).sum().backward()
    return x.grad


# ---------------------------------------------------------------------------
# Gradients of elementwise functions, against their derivatives

DERIVATIVES = {
    "square": (lambda x: x * x, lambda x: 2 * x),
    "cube": (lambda x: x**3, lambda x: 3 * x**2),
    "exp": (lambda x: x.exp(), np.exp),
    "sin": (lambda x: x.sin(), np.cos),
    "tanh": (lambda x: x.tanh(), lambda x: 1 - np.tanh(x) ** 2),
    "sigmoid": (lambda x: x.sigmoid(), lambda x: np.exp(-x) / (1 + np.exp(-x)) ** 2),
    "relu": (lambda x: x.relu(), lambda x: (x > 0).astype(np.float32)),
    "abs": (lambda x: x.abs(), np.sign),
    "log_abs": (lambda x: x.abs().log(), lambda x: 1 / x),
    "reciprocal": (lambda x: 1 / x, lambda x: -1 / x**2),
    "div_scalar": (lambda x: x / 4, lambda x: np.full_like(x, 0.25)),
    "rsub": (lambda x: 1 - x, lambda x: -np.ones_like(x)),
    "neg_mul": (lambda x: -(x * 3), lambda x: np.full_like(x, -3.0)),
    "pow_base": (lambda x: 2**x, lambda x: np.log(2) * 2**x),
}


@pytest.mark.parametrize("name", DERIVATIVES)
def test_elementwise_derivatives(name):
    f, df = DERIVATIVES[name]
    close(grad_of(f), df(X.astype(np.float64)), rtol=1e-5)


def test_matmul_grads():
    a = np.array([[1.0, 2.0, 0.5], [-1.0, 0.0, 3.0]], dtype=np.float32)
    b = np.array([[0.5, -1.0], [2.0, 1.0], [0.0, 1.5]], dtype=np.float32)
    g = np.array([[1.0, 2.0], [-1.0, 0.5]], dtype=np.float32)
    x, w = leaf(a), leaf(b)
    (x @ w).backward(torch.tensor(g.tolist()))
    close(x.grad, g @ b.T)
    close(w.grad, a.T @ g)


def test_reductions_views_and_indexing_grads():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = leaf(a)
    y = x.sum() + x.mean(0).sum() * 2 + x.t()[1].sum() * 10 + x[:, ::2].sum() * 100
    y.backward()
    expected = 1 + 2 / 2 + np.array([[0, 10, 0], [0, 10, 0]]) + np.array([[100, 0, 100]] * 2)
    close(x.grad, expected)


def test_repeated_index_accumulates():
    x = leaf([1.0, 2.0, 3.0])
    x[[0, 0, 2, 0]].sum().backward()
    close(x.grad, [3, 0, 1])


def test_max_softmax_and_losses():
    x = leaf([1.0, 3.0, 2.0])
    x.max().backward()
    close(x.grad, [0, 1, 0])
    x = leaf([[0.5, 1.5, -1.0]])
    torch.nn.functional.cross_entropy(x, torch.tensor([1])).backward()
    p = np.exp([0.5, 1.5, -1.0]) / np.exp([0.5, 1.5, -1.0]).sum()
    close(x.grad, [p - np.array([0, 1, 0])])
    x = leaf([1.0, 2.0])
    torch.nn.functional.mse_loss(x, torch.tensor([0.0, 4.0])).backward()
    close(x.grad, [1.0, -2.0])  # 2 (x - t) / n


def test_cat_stack_split_unbind():
    x = leaf([1.0, 2.0, 3.0, 4.0])
    a, b = x.split(2)
    c, d = torch.stack([a, b]).unbind(1)
    (torch.cat([c * 1, d * 2, a * 3]).sum()).backward()
    close(x.grad, [4, 5, 1, 2])


# ---------------------------------------------------------------------------
# Leaves and requires_grad


def test_leaf_and_nonleaf_flags():
    x = leaf()
    y = x * 2
    c = torch.ones(3)
    assert x.is_leaf and x.grad_fn is None and x.requires_grad
    assert not y.is_leaf and y.requires_grad and y.grad_fn.name() == "MulBackward0"
    assert c.is_leaf and not c.requires_grad and not (c * 2).requires_grad
    assert (x + c).requires_grad
    assert not (x > 0).requires_grad and not x.argmax().requires_grad
    assert "grad_fn=<MulBackward0>" in repr(y)
    acc = y.grad_fn.next_functions[0][0]
    assert acc.name() == "torch::autograd::AccumulateGrad" and acc.variable is x
    assert isinstance(y.grad_fn, torch.autograd.graph.Node)


def test_next_functions_list_tensor_inputs():
    # PyTorch's layout: an entry per tensor input (None when it needs no grad); Python
    # numbers have one only where the binding wraps them into a tensor (`x + 2`); Scalar
    # arguments (exponents, clamp bounds, alpha) and index/mask tensors have none.
    x = leaf()
    c = torch.ones(3)

    def edges(t):
        return [None if f is None else f.name() for f, _ in t.grad_fn.next_functions]

    acc = "torch::autograd::AccumulateGrad"
    assert edges(x + 2) == edges(x * c) == edges(torch.add(x, c, alpha=3)) == [acc, None]
    assert edges(x**2) == edges(1 - x) == edges(x.clamp(0, 1)) == [acc]
    assert edges(x.index_select(0, torch.tensor([1]))) == edges(x[x > 0]) == [acc]
    assert edges(torch.where(x > 0, x, c)) == edges(torch.where(x > 0, x, 0.0)) == [acc, None]
    assert edges(torch.addcmul(x, c, c, value=0.5)) == [acc, None, None]
    assert edges(x.masked_fill(x > 0, 1.0)) == [acc]


def test_requires_grad_errors():
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype"):
        torch.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require"):
        torch.tensor([1, 2]).requires_grad_()
    y = leaf() * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf"):
        y.requires_grad = False
    with pytest.raises(RuntimeError, match="var_no_grad = var.detach()"):
        y.requires_grad_(False)


def test_requires_grad_method_and_detach():
    x = torch.tensor([1.0, 2.0])
    assert x.requires_grad_() is x and x.requires_grad and x.is_leaf
    d = x.detach()
    assert not d.requires_grad and d.is_leaf
    d[0] = 5.0  # shares storage, not history
    assert x.tolist() == [5.0, 2.0]
    y = x * 2
    assert y.detach_() is y and y.is_leaf and not y.requires_grad
    with pytest.raises(RuntimeError, match="Can't detach views in-place"):
        (x * 2)[:1].detach_()


def test_detach_shares_version_counter():
    x = leaf()
    y = x.exp()
    y.detach().zero_()
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.sum().backward()


def test_data_is_untracked():
    x = leaf([1.0, 2.0])
    y = x + 1
    x.data.mul_(3)
    assert x.tolist() == [3.0, 6.0] and not x.data.requires_grad
    y.sum().backward()  # no version error: .data is not seen by autograd
    close(x.grad, [1, 1])


# ---------------------------------------------------------------------------
# backward() and autograd.grad


def test_grad_accumulates_in_place():
    x = leaf([1.0, 2.0])
    (x * x).sum().backward()
    g = x.grad
    (x * 3).sum().backward()
    assert x.grad is g
    close(g, [5, 7])
    assert not g.requires_grad
    x.grad = None
    (x * 3).sum().backward()
    close(x.grad, [3, 3])


def test_backward_gradient_argument_and_errors():
    x = leaf([1.0, 2.0, 3.0])
    (x * x).backward(torch.tensor([1.0, 0.5, -1.0]))
    close(x.grad, [2, 2, -6])
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(torch.ones(2))
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        torch.ones(2).sum().backward()
    with pytest.raises(RuntimeError, match="`inputs` argument to `backward\\(\\)` cannot be"):
        (x * 2).sum().backward(inputs=[])
    with pytest.raises(RuntimeError, match="got 2 tensors and 1 gradients"):
        torch.autograd.backward([x.sum(), x.prod()], [torch.tensor(1.0)])


def test_backward_inputs():
    x, w = leaf([1.0, 2.0]), leaf([3.0, -1.0])
    (x * w).sum().backward(inputs=[w])
    assert x.grad is None
    close(w.grad, [1, 2])
    y = x * 3
    (y * y).sum().backward(inputs=[y])
    close(y.grad, [6, 12])
    assert x.grad is None


def test_autograd_grad():
    x, w = leaf([1.0, 2.0]), leaf([3.0, -1.0])
    y = (x * w).sum()
    gx, gw = torch.autograd.grad(y, [x, w], retain_graph=True)
    close(gx, [3, -1])
    close(gw, [1, 2])
    assert x.grad is None and w.grad is None
    (g,) = torch.autograd.grad(x * 2, x, grad_outputs=torch.tensor([1.0, 10.0]))
    close(g, [2, 20])
    (g,) = torch.autograd.grad([x.sum(), (x * x).sum()], x)
    close(g, [3, 5])
    (g,) = torch.autograd.grad(x, x, torch.tensor([4.0, 5.0]))  # the output is the input
    close(g, [4, 5])


def test_autograd_grad_unused():
    x, w = leaf([1.0]), leaf([2.0, 3.0])
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        torch.autograd.grad((x * 2).sum(), [x, w])
    gx, gw = torch.autograd.grad((x * 2).sum(), [x, w], allow_unused=True)
    assert gw is None
    gx, gw = torch.autograd.grad((x * 2).sum(), [x, w], materialize_grads=True)
    close(gw, [0, 0])
    with pytest.raises(ValueError, match="Expected allow_unused to be True"):
        torch.autograd.grad(x.sum(), x, allow_unused=False, materialize_grads=True)
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require"):
        torch.autograd.grad((x * 2).sum(), torch.ones(1))


def test_grad_nonleaf_input():
    x = leaf([1.0, 2.0])
    y = x * 2
    gy, gx = torch.autograd.grad((y**2).sum(), [y, x])
    close(gy, [4, 8])
    close(gx, [8, 16])


def test_grad_dtype_follows_input():
    x = leaf([1.0, 2.0])
    w = leaf([0.5, 1.5], torch.float64)
    (x * w).sum().backward()
    assert x.grad.dtype == torch.float32 and w.grad.dtype == torch.float64
    (g,) = torch.autograd.grad(x.double().sum(), x)
    assert g.dtype == torch.float32


def test_retain_grad():
    x = leaf([1.0, 2.0])
    y = x * x
    y.retain_grad()
    assert y.retains_grad and not x.retains_grad
    (y * 3).sum().backward()
    close(y.grad, [3, 3])
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad"):
        torch.ones(1).retain_grad()


# ---------------------------------------------------------------------------
# Graph lifetime and higher order


def test_second_backward_needs_retain_graph():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    close(x.grad, [4, 8])
    with pytest.raises(RuntimeError, match=FREED):
        y.backward()


def test_second_backward_allowed_when_nothing_saved():
    x = leaf([1.0, 2.0])
    y = (x + 1).view(2, 1).sum()
    y.backward()
    y.backward()
    close(x.grad, [2, 2])


def test_higher_derivatives():
    x = leaf([0.5, 1.0, 2.0])
    (g,) = torch.autograd.grad((x**3).sum(), x, create_graph=True)
    (g2,) = torch.autograd.grad(g.sum(), x, create_graph=True)
    (g3,) = torch.autograd.grad(g2.sum(), x)
    close(g.detach(), 3 * np.array([0.5, 1, 2]) ** 2)
    close(g2.detach(), 6 * np.array([0.5, 1, 2]))
    close(g3, [6, 6, 6])


def test_create_graph_backward():
    x = leaf([1.0, 2.0])
    x.sin().sum().backward(create_graph=True)
    g = x.grad
    assert g.requires_grad
    x.grad = None
    g.sum().backward()
    close(x.grad, -np.sin([1.0, 2.0]))


def test_linear_function_grad_has_no_history():
    x = leaf([1.0, 2.0])
    (g,) = torch.autograd.grad((x * 3).sum(), x, create_graph=True)
    assert not g.requires_grad


def test_hessian_vector_product():
    # f(x) = sum(x^2 * y) with y fixed: H = diag(2y)
    x = leaf([1.0, -2.0, 0.5])
    y = torch.tensor([1.0, 3.0, -2.0])
    (g,) = torch.autograd.grad((x * x * y).sum(), x, create_graph=True)
    v = torch.tensor([1.0, 1.0, 2.0])
    (hv,) = torch.autograd.grad((g * v).sum(), x)
    close(hv, [2, 6, -8])


def test_gradient_penalty_mlp():
    F = torch.nn.functional
    w = leaf([[1.0, -1.0]])
    x = leaf([[0.5, 0.25]])
    out = F.linear(torch.tanh(x), w)  # out = tanh(x0) - tanh(x1)
    (gx,) = torch.autograd.grad(out.sum(), x, create_graph=True)
    penalty = (gx**2).sum()  # w0^2 s0^2 + w1^2 s1^2, s = sech^2(x)
    penalty.backward()
    s = 1 / np.cosh([0.5, 0.25]) ** 2
    close(w.grad, [[2 * 1.0 * s[0] ** 2, 2 * -1.0 * s[1] ** 2]])


# ---------------------------------------------------------------------------
# In-place ops and the version counter


def test_version_counter():
    x = torch.zeros(3)
    assert x._version == 0
    x.add_(1)
    x[0] = 2
    x.view(3).mul_(2)
    assert x._version == 3


def test_modified_saved_input_or_output_errors():
    x = leaf([1.0, 2.0])
    a = x * 1
    y = a * a
    a.add_(1)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.sum().backward()
    y = x.sigmoid()
    y.mul_(2)
    with pytest.raises(RuntimeError, match="output 0 of Sigmoid, is at version 1; expected"):
        y.sum().backward()


def test_modified_saved_tensor_is_named_by_its_legacy_type():
    # PyTorch names the modified tensor by its legacy type, integer ones too: an index that
    # gather saved is "[torch.LongTensor [2]]" (checked against PyTorch 2.13).
    x = leaf([1.0, 1.0, 1.0])
    idx = torch.tensor([0, 2])
    y = x.gather(0, idx)
    idx.add_(0)
    with pytest.raises(RuntimeError, match=r"\[torch\.LongTensor \[2\]\] is at version 1"):
        y.sum().backward()
    a = x * 1
    y = a * a
    a.add_(1)
    with pytest.raises(RuntimeError, match=r"\[torch\.FloatTensor \[3\]\], which is output 0"):
        y.sum().backward()


def test_modified_unsaved_input_is_fine():
    x = leaf([1.0, 2.0])
    w = torch.ones(2)
    y = x + w  # add saves nothing
    w.add_(1)
    y.sum().backward()
    close(x.grad, [1, 1])


def test_inplace_chain_on_nonleaf():
    x = leaf([1.0, 2.0])
    y = x * 1
    y.pow_(2)
    y.add_(1)
    y.sin_()
    y.sum().backward()
    close(x.grad, np.cos(np.array([1.0, 2.0]) ** 2 + 1) * 2 * np.array([1.0, 2.0]))


def test_leaf_inplace_errors():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        x[0] = 1.0
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        x.view(-1).mul_(2)
    with torch.no_grad():
        x.mul_(2)
    assert x.is_leaf and x.requires_grad and x.tolist() == [[2.0, 4.0], [6.0, 8.0]]


def test_setitem_and_views_on_nonleaf():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    y = x * 1
    y[0, 1] = 10.0
    y[:, 0] *= 3
    y.view(-1).add_(x.view(-1))
    y.sum().backward()
    close(x.grad, [[4, 1], [4, 2]])


def test_buffer_filled_by_setitem():
    x = leaf([1.0, 2.0, 3.0])
    buf = torch.zeros(2, 3)
    buf[0] = x * 2
    buf[1] = x**2
    assert buf.requires_grad and buf.grad_fn.name() == "torch::autograd::CopySlices"
    buf.sum().backward()
    close(x.grad, 2 + 2 * np.array([1.0, 2.0, 3.0]))


def test_write_through_detached_view_keeps_history():
    x = leaf([1.0, 2.0])
    y = x * 3
    y.detach()[0] = 100.0
    (y + x).sum().backward()
    assert y.tolist() == [100.0, 6.0]
    close(x.grad, [4, 4])


def test_out_argument_with_grad_errors():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic differ"):
        torch.add(x, 1, out=torch.empty(2))


# ---------------------------------------------------------------------------
# Grad modes


def test_no_grad_and_enable_grad():
    x = leaf()
    with torch.no_grad():
        assert not (x * 2).requires_grad and not torch.is_grad_enabled()
        with torch.enable_grad():
            assert (x * 2).requires_grad
    assert torch.is_grad_enabled()

    @torch.no_grad()
    def f():
        return x * 2

    @torch.no_grad
    def g():
        return x * 2

    assert not f().requires_grad and not g().requires_grad and torch.is_grad_enabled()


def test_set_grad_enabled():
    torch.set_grad_enabled(False)
    assert not torch.is_grad_enabled()
    torch.set_grad_enabled(True)
    with torch.set_grad_enabled(False):
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()

    @torch.set_grad_enabled(False)
    def f():
        return torch.is_grad_enabled()

    assert torch.is_grad_enabled()  # decorating does not switch the mode
    assert not f() and torch.is_grad_enabled()


def test_grad_mode_on_generator():
    @torch.no_grad()
    def gen():
        for _ in range(2):
            yield torch.is_grad_enabled()
        return "done"

    seen = []
    for enabled in gen():
        seen += [enabled, torch.is_grad_enabled()]
    assert seen == [False, True, False, True]


def test_inference_mode():
    x = leaf()
    with torch.inference_mode():
        assert torch.is_inference_mode_enabled() and not (x * 2).requires_grad
    with torch.inference_mode(False):
        assert (x * 2).requires_grad
    assert not torch.is_inference_mode_enabled() and torch.is_grad_enabled()


def test_grad_mode_is_thread_local():
    seen = {}

    def worker():
        seen["start"] = torch.is_grad_enabled()
        torch.set_grad_enabled(False)

    with torch.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        seen["main"] = torch.is_grad_enabled()
    assert seen == {"start": True, "main": False}
    assert torch.is_grad_enabled()


# ---------------------------------------------------------------------------
# Complex gradients: PyTorch's conjugate Wirtinger convention


def test_complex_grads():
    x = leaf([3 + 4j, 1 - 1j])
    x.abs().sum().backward()
    z = np.array([3 + 4j, 1 - 1j])
    np.testing.assert_allclose(x.grad.numpy(), z / np.abs(z), rtol=1e-6)
    x = leaf([1 + 2j])
    (x.real * 2 + x.imag * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2 + 3j])
    x = leaf([1 + 1j, 2 - 1j])
    (x * x.conj()).real.sum().backward()  # |x|^2: grad 2x
    np.testing.assert_allclose(x.grad.numpy(), [2 + 2j, 4 - 2j])
    with pytest.raises(RuntimeError, match="only for real scalar outputs"):
        leaf([1 + 1j]).sum().backward()


def test_double_backward_nodes_carry_pytorchs_names():
    # derivatives.yaml: pow's gradient is grad * 2 * x (a mul), tanh's is tanh_backward,
    # div's is grad / other for self and -grad * self / other**2 (a mul) for other.
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.tensor([4.0, 8.0], requires_grad=True)
    (g,) = torch.autograd.grad((x**2).sum(), [x], create_graph=True)
    assert g.grad_fn.name() == "MulBackward0"
    (gg,) = torch.autograd.grad(g.sum(), [x], create_graph=True)
    assert gg.grad_fn.name() == "MulBackward0"
    assert gg.tolist() == [2.0, 2.0]
    (g,) = torch.autograd.grad(x.tanh().sum(), [x], create_graph=True)
    assert g.grad_fn.name() == "TanhBackwardBackward0"
    gx, gy = torch.autograd.grad((x / y).sum(), [x, y], create_graph=True)
    assert (gx.grad_fn.name(), gy.grad_fn.name()) == ("DivBackward0", "MulBackward0")
    assert gx.tolist() == [0.25, 0.125] and gy.tolist() == [-1 / 16, -2 / 64]
    # the two nodes each carry their gradient's history: d(gy)/dy = 2x / y^3
    (gyy,) = torch.autograd.grad(gy.sum(), [y])
    np.testing.assert_allclose(gyy.numpy(), [2 / 64, 4 / 512], rtol=1e-6)


def test_double_backward_follows_each_formulas_inputs():
    # derivatives.yaml: mul's gradient for self is grad * other (no path to self), clamp's is
    # where(mask, grad, 0) (the mask carries no history), log's second derivative is
    # -grad / x**2 (a mul), silu's sums two paths (an add), abs's sgn has a zero derivative.
    x = torch.tensor([0.5, 2.0], requires_grad=True)
    y = torch.tensor([3.0, 4.0], requires_grad=True)
    gx, gy = torch.autograd.grad((x * y).sum(), [x, y], create_graph=True)
    assert torch.autograd.grad(gx.sum(), [x], allow_unused=True) == (None,)
    (gxy,) = torch.autograd.grad(gx.sum(), [y])
    assert gxy.tolist() == [1.0, 1.0]
    (g,) = torch.autograd.grad(x.clamp(0.7, 1.2).sum(), [x], create_graph=True)
    assert not g.requires_grad and g.grad_fn is None and g.tolist() == [0.0, 0.0]
    (g,) = torch.autograd.grad(x.log().sum(), [x], create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), [x], create_graph=True)
    assert gg.grad_fn.name() == "MulBackward0"
    np.testing.assert_allclose(gg.detach().numpy(), [-4.0, -0.25])
    (g,) = torch.autograd.grad(torch.nn.functional.silu(x).sum(), [x], create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), [x], create_graph=True)
    assert gg.grad_fn.name() == "AddBackward0"
    (g,) = torch.autograd.grad(x.abs().sum(), [x], create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), [x])
    assert gg.tolist() == [0.0, 0.0] and not gg.requires_grad


def test_node_names_follow_the_overload():
    x = torch.ones(2, 3, requires_grad=True)
    names = [
        t.grad_fn.name()
        for t in (
            x.sum(),
            x.sum(1),
            x.mean(),
            x.mean(0),
            x.prod(1),
            x.var(1),
            x.std(),
            torch.var_mean(x, 1)[0],
            x.round(decimals=2),
            x.div(2.0, rounding_mode="floor"),
        )
    ]
    assert names == [
        "SumBackward0",
        "SumBackward1",
        "MeanBackward0",
        "MeanBackward1",
        "ProdBackward1",
        "VarBackward0",
        "StdBackward0",
        "VarMeanBackward0",
        "RoundBackward1",
        "DivBackward2",
    ]


def test_node_names_of_one_kernel_for_several_aten_ops():
    # PyTorch's ops, which jtorch runs as one kernel (or a view and a copy)
    F = torch.nn.functional
    x = torch.ones(3, 2, 4, requires_grad=True)
    i = torch.zeros(1, 2, 4, dtype=torch.long)
    got = [
        t.grad_fn.name()
        for t in (
            x.scatter(0, i, x[:1]),
            x.scatter(0, i, 1.0),
            x.scatter_add(0, i, x[:1]),
            x.index_add(0, torch.tensor([0]), x[:1]),
            x.index_fill(0, torch.tensor([0]), 1.0),
            F.interpolate(x, scale_factor=2),
            F.interpolate(x, scale_factor=2, mode="linear"),
            F.pad(x, (1, 1)),
            F.pad(x, (1, 1), mode="reflect"),
            torch.t_copy(x[0]),
            torch.narrow_copy(x, 0, 0, 1),
        )
    ]
    assert got == [
        "ScatterBackward0",
        "ScatterBackward1",
        "ScatterAddBackward0",
        "IndexAddBackward0",
        "IndexFillBackward0",
        "UpsampleNearest1DBackward0",
        "UpsampleLinear1DBackward0",
        "ConstantPadNdBackward0",
        "ReflectionPad1DBackward0",
        "TBackward0_copy",
        "NarrowCopyBackward0",
    ]


def test_node_names_follow_the_ranks_and_dtypes():
    F = torch.nn.functional
    v = torch.ones(4, requires_grad=True)
    m = torch.ones(3, 4, requires_grad=True)
    got = [
        t.grad_fn.name()
        for t in (
            v @ v,
            m @ v,
            v @ m.t(),
            m @ m.t(),
            torch.fft.fft(v),
            torch.fft.ifft(v),
            torch.diag(v),
            F.conv1d(torch.ones(2, 5, requires_grad=True), torch.ones(3, 2, 2)),
            F.cross_entropy(m, torch.tensor([0, 1, 2])),
        )
    ]
    assert got == [
        "DotBackward0",
        "MvBackward0",
        "SqueezeBackward4",
        "MmBackward0",
        "FftR2CBackward0",
        "ConjBackward0",
        "DiagEmbedBackward0",
        "SqueezeBackward1",
        "NllLossBackward0",
    ]
    # cross_entropy's input gradient is log_softmax's, as in PyTorch's graph
    (g,) = torch.autograd.grad(F.cross_entropy(m, torch.tensor([0, 1, 2])), [m], create_graph=True)
    assert g.grad_fn.name() == "LogSoftmaxBackwardDataBackward0"
