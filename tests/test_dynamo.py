"""`torch._dynamo` and `torch.compiler` (PyTorch's documented behaviour)."""

import pytest

import jtorch as torch


def test_compile_module_returns_optimized_module():
    m = torch.nn.Linear(2, 2)
    c = torch.compile(m)
    assert isinstance(c, torch._dynamo.OptimizedModule) and c._orig_mod is m
    assert list(c.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    x = torch.ones(3, 2)
    assert torch.allclose(c(x), m(x))
    assert c.weight is m.weight and c.in_features == 2
    c.train(False)
    assert not m.training
    assert torch._dynamo.eval_frame.innermost_fn(c.forward) is not None


def test_is_compiling_inside_a_compiled_function():
    seen = []

    @torch.compile
    def f(x):
        seen.append((torch.compiler.is_compiling(), torch._dynamo.is_compiling()))
        return x * 2

    f(torch.ones(2))
    assert seen[0] == (True, True) and not torch.compiler.is_compiling()


def test_graph_break_runs_the_call_eagerly():
    @torch.compile
    def f(x):
        torch._dynamo.graph_break()
        return x + 1

    with pytest.warns(UserWarning):
        assert f(torch.ones(1)).item() == 2.0


def test_marks_and_config():
    t = torch.ones(2)
    torch._dynamo.mark_static_address(t, guard=True)
    torch._dynamo.maybe_mark_dynamic(t, 0)
    torch._dynamo.mark_static(t)
    assert t._dynamo_static_input_type == "guarded" and t._dynamo_static_indices == {0}
    with pytest.raises(TypeError):
        torch._dynamo.mark_static_address([1])
    cfg = torch._dynamo.config
    old = cfg.cache_size_limit
    with cfg.patch(cache_size_limit=old + 1):
        assert cfg.cache_size_limit == old + 1
    assert cfg.cache_size_limit == old
    with pytest.raises(AttributeError):
        cfg.patch(not_a_flag=1)


def test_compiler_helpers():
    assert torch.compiler.is_exporting() is False
    assert torch.compiler.cudagraph_mark_step_begin() is None

    @torch.compiler.wrap_numpy
    def npfn(a):
        return a * 2

    assert npfn(torch.ones(2)).tolist() == [2.0, 2.0]
    assert torch.compiler.nested_compile_region(len) is len


def test_transform_getitem_to_index_under_vmap():
    from jtorch._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex

    x = torch.arange(12.0).reshape(3, 4)
    with TransformGetItemToIndex():
        diag = torch.vmap(lambda i: x[i, i])(torch.arange(3))
        assert x[1, 2].item() == 6.0
    assert diag.tolist() == [0.0, 5.0, 10.0]
