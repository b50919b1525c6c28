"""Forward-mode AD (`jtorch.autograd.forward_ad`): tangents from calculus, views, in-place."""

import numpy as np
import pytest

import jtorch as torch
import jtorch.autograd.forward_ad as fwAD
from jtorch._ops import _dispatch
from tests.helpers import close, f32

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
V = np.array([[1.0, 2.0, -1.0], [0.5, -0.5, 3.0]])
Y = np.array([[2.0, 1.0, -3.0], [0.5, 4.0, 1.0]])


def _xv():
    return f32(X), f32(V)


def test_sin_tangent_is_cos_times_v():
    # d/dt sin(x + t v) at t = 0 is cos(x) v
    x, v = _xv()
    with fwAD.dual_level():
        p, t = fwAD.unpack_dual(torch.sin(fwAD.make_dual(x, v)))
    close(p, np.sin(X))
    close(t, np.cos(X) * V)
    assert t.dtype == torch.float32


def test_product_rule_and_matmul():
    x, v = _xv()
    y, w = f32(Y), f32(V[::-1].copy())
    with fwAD.dual_level():
        dx, dy = fwAD.make_dual(x, v), fwAD.make_dual(y, w)
        prod = fwAD.unpack_dual(dx * dy + 3 * dx).tangent
        mm = fwAD.unpack_dual(dx @ dy.t()).tangent
        red = fwAD.unpack_dual((dx**2).sum()).tangent
    W = V[::-1]
    close(prod, V * Y + X * W + 3 * V)
    close(mm, V @ Y.T + X @ W.T)
    close(red, np.sum(2 * X * V), rtol=1e-5)


def test_plain_inputs_give_no_tangent_and_integer_outputs_none():
    x, v = _xv()
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        assert fwAD.unpack_dual(x + 1).tangent is None
        assert fwAD.unpack_dual(d.argmax()).tangent is None
        assert fwAD.unpack_dual(d > 0).tangent is None
        values, indices = d.max(1)
        close(fwAD.unpack_dual(values).tangent, V[[0, 1], X.argmax(1)])
        assert fwAD.unpack_dual(indices).tangent is None


def test_views_carry_views_of_the_tangent():
    x, v = _xv()
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        close(fwAD.unpack_dual(d.t()[1:]).tangent, V.T[1:])
        close(fwAD.unpack_dual(d.reshape(-1)).tangent, V.reshape(-1))
        close(
            fwAD.unpack_dual(d[:, None].expand(2, 2, 3)).tangent,
            np.broadcast_to(V[:, None], (2, 2, 3)),
        )
        assert fwAD.unpack_dual(d.detach()).tangent is None


def test_inplace_ops_update_the_tangent_and_views_see_it():
    x, v = _xv()
    with fwAD.dual_level():
        z = fwAD.make_dual(x, v).clone()
        row = z[1]
        z.mul_(2.0)
        close(fwAD.unpack_dual(z).tangent, 2 * V)
        close(fwAD.unpack_dual(row).tangent, 2 * V[1])
        row.mul_(fwAD.make_dual(f32(Y[1]), f32(np.ones(3))))
        # d(z1 * y) = dz1 * y + z1 * dy, written through the view into the base's tangent
        close(fwAD.unpack_dual(z).tangent[1], 2 * V[1] * Y[1] + 2 * X[1])
        z.copy_(f32(Y))
        close(fwAD.unpack_dual(z).tangent, np.zeros((2, 3)))


def test_writing_a_dual_into_a_plain_tensor():
    x, v = _xv()
    with fwAD.dual_level():
        base = torch.zeros(3, 3)
        first = base[0]  # made before the base has a tangent
        base[1:] = fwAD.make_dual(x, v)
        expected = np.zeros((3, 3))
        expected[1:] = V
        close(fwAD.unpack_dual(base).tangent, expected)
        close(fwAD.unpack_dual(first).tangent, np.zeros(3))


def test_make_dual_aliases_the_primal_but_keeps_its_own_tangent():
    x, v = _xv()
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        assert d._base is x
        assert fwAD.unpack_dual(d).tangent is v
        d.mul_(2.0)
        close(x, 2 * X)  # the primal's storage
        close(v, 2 * V)  # the tangent given, updated in place
        assert fwAD.unpack_dual(x).tangent is None
        assert fwAD.unpack_dual(fwAD.unpack_dual(d).primal).tangent is None


def test_level_exit_drops_tangents_and_hook_is_off_outside():
    x, v = _xv()
    assert _dispatch.forward_ad is None
    y = torch.sin(x)
    assert "_fw" not in y.__dict__  # no per-op cost outside a level
    with fwAD.dual_level() as level:
        assert level == 0 and _dispatch.forward_ad is not None
        out = torch.sin(fwAD.make_dual(x, v))
    assert _dispatch.forward_ad is None
    assert fwAD.unpack_dual(out).tangent is None
    assert fwAD.unpack_dual(out).primal is out


def test_decorator_and_disable_switch():
    x, v = _xv()

    @fwAD.dual_level()
    def tangent_of_exp():
        return fwAD.unpack_dual(fwAD.make_dual(x, v).exp()).tangent

    close(tangent_of_exp(), np.exp(X) * V)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        with fwAD._set_fwd_grad_enabled(False):
            assert fwAD.unpack_dual(d * 2).tangent is None
        close(fwAD.unpack_dual(d * 2).tangent, 2 * V)


def test_backward_through_a_tangent():
    # tangent of sum(sin(x)) along v is sum(cos(x) v): its gradient in x is -sin(x) v
    x = f32(X).requires_grad_()
    v = f32(V).requires_grad_()
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(torch.sin(fwAD.make_dual(x, v)).sum()).tangent
        gx, gv = torch.autograd.grad(tangent, (x, v))
    close(gx, -np.sin(X) * V)
    close(gv, np.cos(X))


def test_func_jvp_unaffected_by_a_dual_level():
    x, v = _xv()
    with fwAD.dual_level():
        out, tangent = torch.func.jvp(torch.sin, (x,), (v,))
    close(tangent, np.cos(X) * V)


def test_errors():
    x, v = _xv()
    with pytest.raises(RuntimeError, match="no level exists"):
        fwAD.make_dual(x, v)
    with pytest.raises(RuntimeError, match="Dual level must be a positive number"):
        fwAD.exit_dual_level()
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="Nested forward mode AD"):
            fwAD.enter_dual_level()
        with pytest.raises(RuntimeError, match="different size"):
            fwAD.make_dual(x, torch.ones(3))
        with pytest.raises(ValueError, match="Expected tangent to be floating point"):
            fwAD.make_dual(x, torch.ones(2, 3, dtype=torch.int64))
        d = fwAD.make_dual(x, v)
        with pytest.raises(RuntimeError, match="already has a forward gradient"):
            fwAD.make_dual(d, v)
        out = torch.full((2, 3), 7.0)
        with pytest.raises(NotImplementedError, match="sin_out"):
            torch.sin(d, out=out)
        close(out, np.full((2, 3), 7.0))  # left unchanged
        with pytest.raises(RuntimeError, match="not the last one"):
            fwAD.exit_dual_level(level=1)


def test_repr_shows_the_tangent_and_t_restrides_it():
    with fwAD.dual_level():
        x = fwAD.make_dual(torch.zeros(2), torch.tensor([1.0, 2.0]))
        assert repr(x) == "tensor([0., 0.], tangent=tensor([1., 2.]))"
        m = fwAD.make_dual(torch.ones(2, 3), torch.arange(6.0).reshape(2, 3))
        m.t_()
        assert fwAD.unpack_dual(m * 1).tangent.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    assert repr(x) == "tensor([0., 0.])"
