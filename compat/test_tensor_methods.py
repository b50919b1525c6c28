"""Tensor-method parity: in-place view ops, resize_/set_/storage, `.grad` assignment and
its non-leaf warning, fill_diagonal_, Python callbacks and small predicates.

Each case is one function of the library (`torch` or `jtorch`); both runs are reduced to
plain data (values, dtype, shape, strides, offset, version, grad_fn names, gradients, or
the exception type and message) and compared.
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
            x.requires_grad,
        )
    if isinstance(x, (torch.dtype, jtorch.dtype)):
        return str(x)
    if isinstance(x, (tuple, list)):
        return tuple(_plain(v) for v in x)
    if callable(getattr(x, "name", None)) and hasattr(x, "next_functions"):
        return ("node", x.name().rpartition("::")[2])
    if isinstance(x, type):
        return ("class", x.__name__)
    return x


def _run(lib, case):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = ("ok", _plain(case(lib)))
        except Exception as e:  # noqa: BLE001 - the exception is what is compared
            out = ("raises", type(e).__name__, str(e).split("\n")[0])
    messages = [
        str(w.message).split(" (Triggered internally")[0]
        for w in caught
        if "TypedStorage is deprecated" not in str(w.message)
    ]
    return out, messages


def grid(lib, *shape):
    return lib.arange(float(np.prod(shape))).reshape(shape).clone()


def _restride_grads(lib):
    a = lib.ones(2, 3, requires_grad=True)
    b = a * 1
    out = [
        b.t_().grad_fn,
        b.unsqueeze_(0).grad_fn,
        b.squeeze_().grad_fn,
        b.unsqueeze_(2).grad_fn,
        b.squeeze_(2).grad_fn,
        b.unsqueeze_(0).grad_fn,
        b.squeeze_((0,)).grad_fn,
        b.transpose_(0, 1).grad_fn,
        b.swapaxes_(0, 1).grad_fn,
        b.swapdims_(1, 0).grad_fn,
        b.as_strided_((3, 2), (1, 3)).grad_fn,
    ]
    (b * lib.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).sum().backward()
    return out, b._version, a.grad


def _restrided_root_views(lib):
    a = lib.ones(2, 3, requires_grad=True)
    c = a * 1
    old = c[1]
    c.t_()
    w = c[0]
    w.mul_(10)
    old.mul_(lib.tensor([1.0, 2.0, 3.0]))
    (c * lib.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).sum().backward()
    return c, old.detach(), a.grad


def _view_then_unsqueeze_(lib):
    a = lib.ones(2, 3, requires_grad=True)
    c = a * 1
    v = c[0]
    v.unsqueeze_(0)
    (v * lib.tensor([[1.0, 2.0, 3.0]])).sum().backward()
    return v._base is c, v.grad_fn, v.grad_fn.next_functions[0][0], c._version, a.grad


def _strided_of_view(lib):
    a = lib.ones(5, requires_grad=True)
    b = (a * 1)[1:]
    c = b.as_strided((2,), (1,), 1)
    d = b.unfold(0, 2, 1)
    ((c * lib.tensor([1.0, 10.0])).sum() + (d * lib.tensor([[1e2, 1e3]] * 3)).sum()).backward()
    return c, d, a.grad


def _inplace_views_plain(lib):
    x = grid(lib, 2, 3)
    before = x[0]
    x.t_()
    x.mul_(2)
    s = lib.tensor(3.0)
    w = lib.zeros(1, 2, 1)
    u = grid(lib, 2, 3).t()
    return (
        x,
        before,
        x._version,
        x._base is None,
        s.t_(),
        s.unsqueeze_(0),
        s.transpose_(0, 0),
        w.squeeze_(-1),
        w.squeeze_((0,)),
        u.unsqueeze_(1),
        grid(lib, 2, 3).as_strided_((2, 2), (1, 2), 1),
        grid(lib, 2, 3)[1].as_strided_((2,), (1,)),
    )


def _saved_result_invalidated(lib):
    a = lib.ones(2, 3, requires_grad=True)
    y = a.exp()
    y.t_()
    y.sum().backward()


def _resize(lib):
    x = lib.zeros(2, 3)
    v = x[0]
    x.resize_(4)
    x.fill_(1)
    y = lib.zeros(6)[2:]
    y.resize_(2, 2)
    z = lib.zeros(2, 3).t()
    z.resize_(3, 2)
    return v, x, y, z, z.resize_(2, 3), x._version


def _grad_nonleaf(lib):
    a = lib.ones(2, 3, requires_grad=True)
    b = a * 2
    c = a * 3
    c.retain_grad()
    first = b.grad
    b.grad = lib.ones(2, 3)
    return first, b.grad, c.grad, a.grad, b.is_leaf


def _grad_dtype(lib):
    a = lib.ones(2, 3, requires_grad=True)
    out = [a.grad_dtype]
    a.grad_dtype = None
    a.grad = lib.ones(2, 3, dtype=lib.float64)
    out += [a.grad_dtype, a.grad]
    return out


def _set_forms(lib):
    w = lib.arange(3.0)
    t = lib.zeros(3)
    out = [t.set_(w), t.is_set_to(w), t._version]
    t.fill_(4)
    out.append(w.clone())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out.append(lib.zeros(1).set_(w.storage(), 1, (2,), (1,)))
        out.append(lib.zeros(1).set_(w.storage()))
    out.append(lib.zeros(1).set_(w.untyped_storage(), 1, (2,), (1,)))
    out.append(lib.zeros(1).set_(w, 1, (2,), (1,)))
    out.append(lib.zeros(1).set_(w[1:]))
    out.append(lib.zeros(1).set_())
    v = lib.zeros(1).set_(grid(lib, 2, 3), 1, (2, 2), (1, 3))
    v.mul_(-1)
    out.append(v)
    return out


def _set_autograd(lib):
    a = lib.ones(3, requires_grad=True)
    b = a * 2
    c = lib.zeros(3)
    c.set_(b)
    d = a * 1
    d.set_(lib.zeros(2))
    with lib.no_grad():
        e = lib.zeros(3, requires_grad=True)
        e.set_(lib.ones(3))
    return c.grad_fn, c.requires_grad, d.grad_fn, e, e.is_leaf


def _storage(lib):
    w = lib.arange(3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = w.storage()
        st = w.storage_type()
        out = [
            s.size(),
            len(s),
            str(s.dtype),
            str(s.device),
            s.tolist(),
            s[1],
            s.nbytes(),
            s.element_size(),
            s.data_ptr() == w.data_ptr(),
            w[1:].storage().data_ptr() == s.data_ptr(),
            w[1:].storage().size(),
            st,
            w.untyped_storage().size(),
            w.untyped_storage().nbytes(),
            repr(s),
        ]
        s[0] = 7
        c = lib.zeros(2, dtype=lib.complex64).storage()
    return out + [w, str(c.dtype), c.size()]


def _fill_diagonal(lib):
    a = lib.ones(2, 2, requires_grad=True)
    b = a * 2
    b.fill_diagonal_(0)
    b.sum().backward()
    return (
        lib.zeros(7, 3).fill_diagonal_(5, wrap=True),
        lib.zeros(7, 3).fill_diagonal_(5),
        lib.zeros(3, 5).fill_diagonal_(5, wrap=True),
        lib.zeros(2, 2, 2).fill_diagonal_(1),
        lib.zeros(3, 3, dtype=lib.int64).fill_diagonal_(2.7),
        lib.zeros(4, 3).t().fill_diagonal_(1, wrap=True),
        b.grad_fn,
        a.grad,
    )


def _callbacks(lib):
    return (
        grid(lib, 2, 3).apply_(lambda v: v * 2 + 1),
        lib.arange(4).apply_(lambda v: v * 1.7),
        lib.tensor([True, False]).apply_(lambda v: not v),
        lib.ones(2, 3).map_(lib.tensor([1.0, 2.0, 3.0]), lambda a, b: a + b),
        lib.ones(2, 2).map2_(
            lib.full((2, 2), 2.0), lib.full((2, 1), 3.0), lambda a, b, c: a + b * c
        ),
    )


def _inference(lib):
    with lib.inference_mode():
        n = lib.ones(3)
        v = n[0:2]
    return (
        n.is_inference(),
        v.is_inference(),
        v[0:1].is_inference(),
        n.clone().is_inference(),
        (n + 1).is_inference(),
        lib.ones(2).is_inference(),
    )


def _predicates(lib):
    x = lib.ones(2)
    return (
        lib.tensor([0.0]).is_nonzero(),
        lib.tensor(2).is_nonzero(),
        lib.ones(2, 3).is_same_size(lib.zeros(2, 3)),
        lib.ones(2, 3).is_same_size(lib.zeros(3, 2)),
        x.is_pinned(),
        x.is_shared(),
        x.share_memory_() is x,
        x.is_shared(),
        x.to_dense() is x,
        x.is_xla,
        x.is_xpu,
        x.is_mps,
        x.is_ipu,
        x.is_vulkan,
        x.is_maia,
        x.is_mtia,
        x.is_sparse_csr,
    )


def _new(lib):
    x = lib.ones(2)
    i = lib.ones(2, dtype=lib.int64)
    t = lib.arange(3.0)
    n = x.new(t)
    return (
        x.new(2, 3).shape,
        x.new((2, 3)),
        x.new([2, 3]),
        x.new(lib.Size([2, 3])).shape,
        x.new(()),
        x.new([]),
        x.new([[1, 2], [3, 4]]),
        x.new(),
        i.new([1.5, 2]),
        i.new(2).dtype,
        n,
        n._base is t,
        n is t,
    )


def _dim_order(lib):
    z = lib.zeros(2, 3, 4)
    return (
        z.dim_order(),
        z.permute(2, 0, 1).dim_order(),
        lib.zeros(2, 3).t().dim_order(),
        z.transpose(0, 1).dim_order(),
        lib.zeros(3, 1, 2).permute(1, 2, 0).dim_order(),
        lib.zeros(2, 3, 4)[:, :, ::2].dim_order(),
        lib.zeros(4).dim_order(),
        lib.zeros(()).dim_order(),
    )


def _subclass_reversed(lib):
    class M(lib.Tensor):
        pass

    x = lib.ones(2)
    y = x.as_subclass(M)
    return (
        type(y).__name__,
        y.data_ptr() == x.data_ptr(),
        list(reversed(lib.arange(3))),
        reversed(lib.arange(6).reshape(2, 3)),
        reversed(lib.tensor(3)),
    )


CASES = {
    "inplace_views_plain": _inplace_views_plain,
    "inplace_views_autograd": _restride_grads,
    "restrided_root_views": _restrided_root_views,
    "view_then_unsqueeze_": _view_then_unsqueeze_,
    "as_strided_unfold_of_view_grad": _strided_of_view,
    "saved_result_invalidated": _saved_result_invalidated,
    "resize_": _resize,
    "grad_nonleaf_warning": _grad_nonleaf,
    "grad_dtype": _grad_dtype,
    "set_forms": _set_forms,
    "set_autograd": _set_autograd,
    "storage": _storage,
    "fill_diagonal_": _fill_diagonal,
    "apply_map_map2": _callbacks,
    "inference": _inference,
    "predicates": _predicates,
    "new": _new,
    "dim_order": _dim_order,
    "as_subclass_reversed": _subclass_reversed,
}

# The first line of the message differs in form only (PyTorch's argument-parser listings).
_LOOSE = {"set_bad_args"}


def _errors():
    t32, t64 = "float32", "float64"

    def leaf(op):
        return lambda lib: op(lib.ones(2, 3, requires_grad=True))

    return {
        "t_3d": lambda lib: lib.zeros(2, 3, 4).t_(),
        "transpose_range": lambda lib: lib.zeros(2, 3, 4).transpose_(0, 3),
        "squeeze_range": lambda lib: lib.zeros(2, 3, 4).squeeze_(3),
        "squeeze_dims_range": lambda lib: lib.zeros(2, 3, 4).squeeze_((0, 5)),
        "unsqueeze_range": lambda lib: lib.zeros(2, 3, 4).unsqueeze_(-5),
        "as_strided_bounds": lambda lib: lib.zeros(2, 3, 4).as_strided_((100,), (1,)),
        "as_strided_mismatch": lambda lib: lib.zeros(2, 3, 4).as_strided_((2,), (1, 2)),
        "t_leaf": leaf(lambda a: a.t_()),
        "squeeze_leaf": leaf(lambda a: a.squeeze_()),
        "unsqueeze_leaf": leaf(lambda a: a.unsqueeze_(0)),
        "as_strided_leaf": leaf(lambda a: a.as_strided_((2,), (1,))),
        "view_of_leaf": leaf(lambda a: a[0].unsqueeze_(0)),
        "grad_size": leaf(lambda a: setattr(a, "grad", torch_like(a).ones(3, 2))),
        "grad_dtype_msg": leaf(
            lambda a: setattr(
                a, "grad", torch_like(a).ones(2, 3, dtype=getattr(torch_like(a), t64))
            )
        ),
        "grad_int_dtype": leaf(
            lambda a: setattr(a, "grad", torch_like(a).ones(3, dtype=torch_like(a).int64))
        ),
        "grad_type": leaf(lambda a: setattr(a, "grad", 3)),
        "grad_self": leaf(lambda a: setattr(a, "grad", a)),
        "grad_dtype_nonleaf": leaf(lambda a: (a * 2).grad_dtype),
        "grad_dtype_bad": leaf(lambda a: setattr(a, "grad_dtype", 3)),
        "is_nonzero_empty": lambda lib: lib.tensor([]).is_nonzero(),
        "is_nonzero_many": lambda lib: lib.tensor([1, 2]).is_nonzero(),
        "bool_empty": lambda lib: bool(lib.tensor([])),
        "is_same_size_type": lambda lib: lib.ones(2).is_same_size(3),
        "set_dtype": lambda lib: lib.zeros(1, dtype=lib.float64).set_(lib.arange(3.0)),
        "set_leaf": leaf(lambda a: a.set_(torch_like(a).zeros(2))),
        "set_bad_args": lambda lib: lib.zeros(1).set_(3),
        "fill_diagonal_shape": lambda lib: lib.zeros(2, 3, 2).fill_diagonal_(1),
        "fill_diagonal_1d": lambda lib: lib.zeros(3).fill_diagonal_(1),
        "fill_diagonal_leaf": leaf(lambda a: a.fill_diagonal_(1)),
        "apply_grad": lambda lib: lib.ones(2, requires_grad=True).apply_(lambda v: v),
        "apply_str": lambda lib: lib.ones(2).apply_(lambda v: "a"),
        "apply_not_callable": lambda lib: lib.ones(2).apply_(3),
        "map_expand": lambda lib: lib.ones(2, 3).map_(lib.ones(2), lambda a, b: a + b),
        "map_dtype": lambda lib: lib.ones(2, 3).map_(
            lib.ones(2, 3, dtype=getattr(lib, t64)), lambda a, b: a
        ),
        "map_grad_self": lambda lib: lib.ones(2, requires_grad=True).map_(
            lib.ones(2), lambda a, b: a
        ),
        "map_grad_other": lambda lib: lib.ones(2).map_(
            lib.ones(2, requires_grad=True), lambda a, b: a
        ),
        "map2_dtype_x": lambda lib: lib.ones(2).map2_(
            lib.ones(2, dtype=getattr(lib, t64)), lib.ones(2), lambda a, b, c: a
        ),
        "map2_dtype_y": lambda lib: lib.ones(2, dtype=getattr(lib, t32)).map2_(
            lib.ones(2), lib.ones(2, dtype=lib.int64), lambda a, b, c: a
        ),
        "map2_grad": lambda lib: lib.ones(2).map2_(
            lib.ones(2), lib.ones(2, requires_grad=True), lambda a, b, c: a
        ),
        "new_negative": lambda lib: lib.ones(2).new(-1),
        "new_float": lambda lib: lib.ones(2).new(2.5),
        "as_subclass_int": lambda lib: lib.ones(2).as_subclass(int),
        "dim_order_ambiguous": lambda lib: lib.zeros(1, 2, 3).dim_order(ambiguity_check=True),
        "dim_order_bad": lambda lib: lib.zeros(2).dim_order(ambiguity_check="x"),
    }


def torch_like(t):
    return torch if isinstance(t, torch.Tensor) else jtorch


ERRORS = _errors()
if not jtorch.cuda.is_available():  # PyTorch here is a CPU-only build
    ERRORS["pin_memory_cpu_build"] = lambda lib: lib.ones(2).pin_memory()


@pytest.mark.parametrize("name", list(CASES))
def test_case(name):
    assert _run(jtorch, CASES[name]) == _run(torch, CASES[name])


@pytest.mark.parametrize("name", list(ERRORS))
def test_error(name):
    (j, jw), (t, tw) = _run(jtorch, ERRORS[name]), _run(torch, ERRORS[name])
    assert t[0] == "raises", t
    if name in _LOOSE:
        assert j[:2] == t[:2]
    else:
        assert (j, jw) == (t, tw)


def test_tensor_method_coverage():
    """The methods this file covers exist on jtorch.Tensor as on torch.Tensor."""
    names = [
        "t_",
        "transpose_",
        "swapaxes_",
        "swapdims_",
        "squeeze_",
        "unsqueeze_",
        "as_strided_",
        "resize_",
        "resize_as_",
        "set_",
        "storage",
        "storage_type",
        "untyped_storage",
        "fill_diagonal_",
        "apply_",
        "map_",
        "map2_",
        "is_nonzero",
        "is_same_size",
        "is_inference",
        "pin_memory",
        "is_pinned",
        "share_memory_",
        "is_shared",
        "record_stream",
        "new",
        "dim_order",
        "to_dense",
        "as_subclass",
        "__reversed__",
        "grad_dtype",
    ]
    assert [n for n in names if hasattr(torch.Tensor, n) and not hasattr(jtorch.Tensor, n)] == []


_NAMED_DTYPES = [
    "float32",
    "float64",
    "float16",
    "bfloat16",
    "int64",
    "int32",
    "int16",
    "int8",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool",
    "complex64",
    "complex128",
    "float8_e4m3fn",
    "float8_e5m2",
]


@pytest.mark.parametrize("dtype", _NAMED_DTYPES)
def test_legacy_type_names(dtype):
    # One rule (c10's name + "Tensor") for Tensor.type(), torch.typename and the messages.
    def names(lib):
        x = lib.zeros(2, dtype=getattr(lib, dtype))
        return x.type(), lib.typename(x)

    assert names(jtorch) == names(torch)


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad_module_and_optimizer(set_to_none):
    # Module.zero_grad and Optimizer.zero_grad share one helper: the same effect as
    # PyTorch's, on a plain grad and on one made with create_graph=True.
    def run(lib):
        w = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        m = lib.nn.Linear(2, 1)
        (m(w) ** 2).sum().backward(create_graph=True)
        opt = lib.optim.SGD([w], lr=0.1)
        m.zero_grad(set_to_none=set_to_none)
        opt.zero_grad(set_to_none=set_to_none)
        out = []
        for p in (w, m.weight, m.bias):
            g = p.grad
            out.append(None if g is None else (g.tolist(), g.requires_grad, g.grad_fn is None))
        return out

    assert run(jtorch) == run(torch)
