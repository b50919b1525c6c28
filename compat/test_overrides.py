"""`__torch_function__` parity: torch function modes, Tensor subclasses, tensor-likes,
`torch.overrides` helpers and `torch._C`'s switches, run the same way in both libraries."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402


def _log_calls(lib, body):
    """The (name, number of args, keyword names) of each call a logging mode sees."""
    seen = []

    class Log(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            seen.append((func.__name__, len(args), tuple(sorted(kwargs))))
            return func(*args, **kwargs)

    with Log():
        out = body(lib)
    return seen, out


BODIES = {
    "add_alpha": lambda L: L.add(L.ones(3), 2, alpha=3),
    "dunder_mul": lambda L: L.tensor([1.0, 2.0]) * 2,
    "method_sum": lambda L: L.tensor([1.0, 2.0]).sum(dim=0),
    "cat_list": lambda L: L.cat([L.tensor([1.0]), L.tensor([2.0])]),
    "relu": lambda L: L.nn.functional.relu(L.tensor([-1.0, 2.0])),
    "inplace": lambda L: L.tensor([1.0, 2.0]).add_(1),
    "matmul": lambda L: L.tensor([[1.0, 2.0]]) @ L.tensor([[3.0], [4.0]]),
    "init_uniform": lambda L: L.nn.init.uniform_(L.empty(2, 3), a=0.0, b=0.0),
    "init_constant": lambda L: L.nn.init.constant_(L.empty(2), 3.0),
}


@pytest.mark.parametrize("case", sorted(BODIES))
def test_mode_sees_the_calls(case):
    want, want_out = _log_calls(torch, BODIES[case])
    got, got_out = _log_calls(jtorch, BODIES[case])
    # jtorch's tensor constructors are not ops; compare the calls after them.
    skip = {"tensor", "empty", "ones"}
    want = [c for c in want if c[0] not in skip]
    got = [c for c in got if c[0] not in skip]
    if case == "relu":
        # PyTorch's Python-level F.relu passes `inplace=` itself; jtorch passes what it got.
        want, got = [c[0] for c in want], [c[0] for c in got]
    assert got == want
    np.testing.assert_allclose(np.asarray(got_out), want_out.numpy())


def test_mode_not_implemented_message():
    def run(lib):
        class NI(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return NotImplemented

        x = lib.ones(1)
        with pytest.raises(TypeError) as e:
            with NI():
                lib.mul(x, 2)
        return str(e.value).split("\n")[0]

    assert run(jtorch) == run(torch)


def _subclass_results(lib):
    class Sub(lib.Tensor):
        pass

    s = lib.tensor([1.0, -2.0, 3.0]).as_subclass(Sub)
    p = lib.tensor([1.0, 1.0, 1.0])
    results = {
        "add": s + p,
        "radd": p + s,
        "method": s.abs(),
        "func": lib.exp(s),
        "cat": lib.cat([p, s]),
        "max": s.max(0),
        "view": s.view(3, 1),
        "index": s[1:],
        "param_mul": lib.nn.Parameter(lib.ones(3)) * 2,
    }
    out = {}
    for k, v in results.items():
        items = list(v) if isinstance(v, tuple) else [v]
        out[k] = [
            type(x).__name__ if type(x).__name__ in ("Sub", "Tensor") else "other" for x in items
        ]
    return out


def test_subclass_results_keep_the_subclass():
    assert _subclass_results(jtorch) == _subclass_results(torch)


def test_tensor_like_dispatch_and_failure():
    def run(lib):
        class Like:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return (func.__name__, len(args), [t.__name__ for t in types])

        class Never:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return NotImplemented

        out = [lib.add(Like(), 1), lib.cat([lib.ones(1), Like()]), lib.ones(2).mul(Like())]
        with pytest.raises(TypeError) as e:
            lib.mul(Never(), 2)
        out.append(str(e.value))
        with pytest.raises(TypeError) as e:
            lib.ones(1).mul(Never())
        out.append(str(e.value))
        return out

    assert run(jtorch) == run(torch)


def test_switches_and_helpers():
    def run(lib):
        C, O = lib._C, lib.overrides
        x = lib.ones(2)
        out = [
            C._is_torch_function_enabled(),
            C._is_torch_function_mode_enabled(),
            C._len_torch_function_stack(),
            O.has_torch_function((x,)),
            O.is_tensor_like(x),
            O.is_tensor_like(1),
            O.is_tensor_like(lib.nn.Parameter(x)),
        ]
        with C.DisableTorchFunctionSubclass():
            out.append(C._is_torch_function_enabled())
            out.append(C._is_torch_function_all_disabled())
        with C.DisableTorchFunction():
            out.append(C._is_torch_function_all_disabled())
        with O.BaseTorchFunctionMode() as m:
            out += [
                C._is_torch_function_mode_enabled(),
                C._len_torch_function_stack(),
                O.has_torch_function((x,)),
                O.has_torch_function_unary(x),
                O.has_torch_function_variadic(x, 1),
                O._get_current_function_mode() is m,
            ]
            with C.DisableTorchFunction():
                out += [C._is_torch_function_mode_enabled(), O.has_torch_function((x,))]
        out.append(lib.nn.Parameter.__torch_function__ is C._disabled_torch_function_impl)
        out.append(C._disabled_torch_function_impl(lib.add, (), (x, x), {}).tolist())
        return out

    assert run(jtorch) == run(torch)


def test_wrap_torch_function():
    def run(lib):
        @lib.overrides.wrap_torch_function(lambda a, b: (a,))
        def f(a, b):
            return "plain"

        class Like:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return ("like", func is f, len(args))

        return [f(lib.ones(1), 2), f(Like(), 2)]

    assert run(jtorch) == run(torch)


def test_default_nowrap_and_grad_passthrough():
    def run(lib):
        class Sub(lib.Tensor):
            pass

        s = lib.ones(2, requires_grad=True).as_subclass(Sub)
        (s * 3).sum().backward()
        return [
            type(s.grad).__name__ if s.grad is not None else None,
            len(lib.overrides.get_default_nowrap_functions()),
        ]

    assert run(jtorch) == run(torch)
