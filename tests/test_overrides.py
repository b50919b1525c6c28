"""`__torch_function__`: modes, Tensor subclasses, tensor-likes and `torch.overrides`
(PyTorch's documented semantics of `torch.overrides`)."""

import subprocess
import sys

import pytest

import jtorch as torch
from jtorch import _torch_function
from jtorch.overrides import BaseTorchFunctionMode, TorchFunctionMode


class Record(TorchFunctionMode):
    def __init__(self, tag="m"):
        super().__init__()
        self.tag, self.calls = tag, []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls.append(func.__name__)
        return func(*args, **(kwargs or {}))


def test_mode_sees_outer_calls_only_and_is_popped_while_it_runs():
    x = torch.ones(3)
    with Record() as m:
        y = torch.nn.functional.softmax(x, 0)  # its own inner ops are not seen
        z = x.add(1).mul_(2)
    assert m.calls == ["softmax", "add", "mul_"]
    assert y.sum().item() == pytest.approx(1.0)
    assert z.tolist() == [4.0, 4.0, 4.0]


def test_nested_modes_innermost_first():
    order = []

    class Tag(TorchFunctionMode):
        def __init__(self, tag):
            super().__init__()
            self.tag = tag

        def __torch_function__(self, func, types, args=(), kwargs=None):
            order.append(self.tag)
            return func(*args, **(kwargs or {}))

    with Tag("outer"), Tag("inner"):
        torch.neg(torch.ones(1))
    # the inner mode runs first; its call of func then reaches the outer one (for the
    # factory too: PyTorch's modes see torch.ones)
    assert order == ["inner", "outer", "inner", "outer"]


def test_mode_result_replaces_the_call():
    class Seven(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return 7

    x = torch.ones(1)
    with Seven():
        assert torch.add(x, 1) == 7
        assert x.sum() == 7
        assert torch.ones(1) == 7  # factories too, as in PyTorch


def test_disable_torch_function_skips_modes():
    with Record() as m:
        with torch._C.DisableTorchFunction():
            torch.ones(1).exp()
        with torch._C.DisableTorchFunctionSubclass():
            torch.ones(1).exp()
    assert m.calls.count("exp") == 1


def test_subclass_results_and_gradients():
    class Sub(torch.Tensor):
        pass

    x = torch.ones(2, requires_grad=True)
    s = x.as_subclass(Sub)
    assert type(s) is Sub and not s.is_leaf
    y = (s * 3).sum()
    assert type(y) is Sub
    y.backward()
    assert x.grad.tolist() == [3.0, 3.0]
    assert type(torch.max(s.detach(), 0).values) is Sub


def test_subclass_handler_order_and_not_implemented():
    log = []

    class A(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append("A")
            return NotImplemented

    class B(A):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append("B")
            return NotImplemented

    a, b = torch.ones(1).as_subclass(A), torch.ones(1).as_subclass(B)
    with pytest.raises(TypeError, match="Multiple dispatch failed for 'torch.add'"):
        torch.add(a, b)
    assert log == ["B", "A"]  # subclasses before their bases


def test_tensor_like_object():
    class Like:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return func.__name__, types, args, kwargs

    name, types, args, kwargs = torch.cat([torch.ones(1), Like()], dim=0)
    assert (name, types, len(args), kwargs) == ("cat", (Like,), 1, {"dim": 0})
    assert torch.overrides.is_tensor_like(Like()) and not torch.overrides.is_tensor_like(3)


_TENSOR_LIKE_FIRST = """
import jtorch as torch
from jtorch import _torch_function
assert not _torch_function.active  # nothing turned the checks on in this process
class Like:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return func.__name__, types, args, kwargs
like = Like()
name, types, args, kwargs = torch.cat([torch.ones(1), like], dim=1)
assert (name, types, kwargs) == ("cat", (Like,), {"dim": 1}) and args[0][1] is like, args
name, types, args, kwargs = torch.add(torch.ones(1), like, alpha=2)
assert (name, types, kwargs) == ("add", (Like,), {"alpha": 2}) and args[1] is like, args
assert torch.ones(2).add(1).tolist() == [2.0, 2.0]
try:
    torch.add(torch.ones(1), object())
except TypeError:
    print("ok")
"""


def test_a_tensor_like_object_is_honoured_before_any_check_was_on():
    # (a fresh process: here the tests above have turned the checks on already)
    out = subprocess.run(
        [sys.executable, "-c", _TENSOR_LIKE_FIRST], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0 and out.stdout.split() == ["ok"], out.stderr[-3000:]


def test_parameter_takes_no_part():
    p = torch.nn.Parameter(torch.ones(2))
    assert not torch.overrides.has_torch_function((p,))
    assert type(p * 2) is torch.Tensor


def test_nn_init_dispatches_with_keywords():
    with Record() as m:
        w = torch.empty(2, 3)
        torch.nn.init.kaiming_uniform_(w, a=1.0)
        torch.nn.init.constant_(w, 2.0)
    assert m.calls[-2:] == ["kaiming_uniform_", "constant_"]
    assert w.tolist() == [[2.0] * 3] * 2

    class Skip(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if func.__name__ == "normal_":
                return kwargs["tensor"]  # as Lightning's _EmptyInit does
            return func(*args, **(kwargs or {}))

    z = torch.zeros(4)
    with Skip():
        torch.nn.init.normal_(z, std=5.0)
    assert z.tolist() == [0.0] * 4


def test_base_mode_and_push_warning():
    with BaseTorchFunctionMode():
        assert torch.add(torch.ones(1), 1).item() == 2.0
    with pytest.warns(UserWarning, match="no longer necessary"):
        mode = Record.push()
    assert isinstance(mode, Record)


def test_checks_switch_off_and_functions_keep_identity():
    # In a fresh process (no subclass instance made yet): the checks are off, a mode turns
    # them on, leaving it turns them off again and restores the functions' own code.
    code = """
import jtorch as torch
from jtorch import _torch_function as tf
from jtorch.overrides import BaseTorchFunctionMode
add, code = torch.add, torch.add.__code__
print(tf.active)
with BaseTorchFunctionMode():
    print(tf.active, torch.add.__code__ is code, torch.add(torch.ones(1), 1).item())
print(tf.active, torch.add.__code__ is code, torch.add is add)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "True", "False", "2.0", "False", "True", "True"]


def test_overridable_functions_and_names():
    fns = torch.overrides.get_overridable_functions()
    assert torch.add in fns[torch] and torch.Tensor.add in fns[torch.Tensor]
    assert torch.overrides.resolve_name(torch.add) == "torch.add"
    assert (
        torch.overrides.resolve_name(torch.nn.functional.mse_loss) == "torch.nn.functional.mse_loss"
    )
    assert torch.typename in torch.overrides.get_ignored_functions()
    assert torch.overrides.get_testing_overrides()[torch.add](1, 2) == -1


def test_state_queries():
    assert _torch_function.is_enabled() and not _torch_function.is_mode_enabled()
    with pytest.raises(RuntimeError, match="empty mode stack"):
        torch._C._pop_torch_function_stack()
