"""`torch._dynamo` / `torch.compiler` parity: OptimizedModule (what torch.compile(module)
returns), marks, config, and the predicates libraries branch on."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - compared by type and message
        return (type(e).__name__, str(e))


def _optimized_module(L):
    m = L.nn.Sequential(L.nn.Linear(2, 3), L.nn.ReLU())
    with L.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(
                L.tensor(
                    np.linspace(-1, 1, p.numel()).reshape(tuple(p.shape)) * (i + 1), dtype=L.float32
                )
            )
    c = L.compile(m)
    x = L.tensor([[1.0, -2.0], [0.5, 0.25]])
    out = [
        type(c).__name__,
        isinstance(c, L._dynamo.OptimizedModule),
        isinstance(c, L._dynamo.eval_frame.OptimizedModule),
        list(c.state_dict()),
        c._orig_mod is m,
        len(c),
        repr(c),
        np.round(c(x).detach().numpy(), 5).tolist(),
    ]
    c.eval()
    out.append((m.training, c.training))
    c.extra_flag = 3
    out.append(getattr(m, "extra_flag", None))
    out.append([n for n, _ in c.named_parameters()])
    return out


def test_optimized_module():
    assert _optimized_module(jtorch) == _optimized_module(torch)


def _marks(L):
    t = L.ones(2, 3)
    out = []
    L._dynamo.mark_static_address(t)
    out.append(t._dynamo_static_input_type)
    L._dynamo.mark_static_address(t, guard=True)
    out.append(t._dynamo_static_input_type)
    L._dynamo.mark_dynamic(t, 0)
    L._dynamo.mark_dynamic(t, [1])
    out.append(sorted(t._dynamo_dynamic_indices))
    out.append(_outcome(lambda: L._dynamo.mark_static_address(3)))

    def h():
        return 1

    out.append((L._dynamo.assume_constant_result(h) is h, h._dynamo_marked_constant))
    out.append(L._dynamo.allow_in_graph(h) is h)
    out.append(L.compiler.allow_in_graph(h) is h)
    out.append(
        [
            L.compiler.is_compiling(),
            L.compiler.is_dynamo_compiling(),
            L.compiler.is_exporting(),
            L._dynamo.is_compiling(),
            L.compiler.cudagraph_mark_step_begin(),
        ]
    )
    cfg = L._dynamo.config
    out.append((cfg.capture_scalar_outputs, cfg.verbose, cfg.suppress_errors))
    with cfg.patch(verbose=True):
        out.append(cfg.verbose)
    out.append(cfg.verbose)
    out.append(_outcome(lambda: setattr(cfg, "no_such_flag_here", 1))[0])
    out.append(issubclass(L._dynamo.exc.Unsupported, RuntimeError))
    return out


def test_marks_config_predicates():
    assert _marks(jtorch) == _marks(torch)


def test_compiled_function_and_disable():
    def run(L):
        @L.compile
        def f(x):
            return (x.sin() * 2).sum()

        @L.compiler.disable
        def eager(x):
            return x + 1

        x = L.linspace(0, 1, 5)
        return [round(f(x).item(), 5), eager(x).tolist()]

    assert run(jtorch) == run(torch)


def test_transform_getitem_to_index():
    import importlib

    def run(L):
        mod = importlib.import_module(L.__name__ + "._dynamo._trace_wrapped_higher_order_op")
        x = L.arange(12.0).reshape(3, 4)
        with mod.TransformGetItemToIndex():
            a = x[1, 2]
            b = x[L.tensor(2)]
            c = L.vmap(lambda i: x[i, i])(L.arange(3))
            d = x[0:2]
        return a.tolist(), b.tolist(), c.tolist(), d.tolist()

    assert run(jtorch) == run(torch)
