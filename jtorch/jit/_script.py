"""`torch.jit.script` / `trace` without TorchScript: the Python code keeps running eagerly.

jtorch has no TorchScript compiler or interpreter. `script` and `trace` return objects that
behave like what PyTorch returns where a program can tell (`isinstance(m, ScriptModule)`,
the repr, state_dict keys, parameters shared with the original module, a training flag of
its own) and run the original Python `forward` on every call. Speed comes from
`torch.compile` instead. Two differences follow from that:

- a traced module or function keeps its Python control flow (PyTorch's trace records the
  one path taken by the example inputs);
- `torch.jit.save` / `torch.jit.load` cannot write or read TorchScript archives: they raise
  a `RuntimeError` that points at `torch.save(model.state_dict(), path)`.
"""

from __future__ import annotations

import collections
import contextlib

from ..nn.modules.module import Module

_NO_TORCHSCRIPT = (
    "jtorch has no TorchScript: {what} TorchScript archives is not supported. Save the weights "
    "with torch.save(model.state_dict(), path) and rebuild the model in Python to load them."
)

# Attributes of a TorchScript object that only exist because there is compiled code behind it.
_IR_ATTRIBUTES = frozenset({"code", "graph", "inlined_graph", "code_with_constants", "_c"})

Attribute = collections.namedtuple("Attribute", ["value", "type"])
Attribute.__doc__ = "Matches `torch.jit.Attribute(value, type)`: the value is used as is."

_tracing = [0]


def is_scripting() -> bool:
    """Matches `torch.jit.is_scripting`: always False (jtorch never runs TorchScript)."""
    return False


def is_tracing() -> bool:
    """Matches `torch.jit.is_tracing`: True while `trace` runs the example inputs."""
    return _tracing[0] > 0


def _ir_missing(obj, name: str) -> AttributeError:
    return AttributeError(
        f"'{type(obj).__name__}' object has no attribute '{name}' (jtorch has "
        f"no TorchScript: a scripted or traced object runs its Python code "
        f"and has no TorchScript graph or code)"
    )


class ScriptModule(Module):
    """The type `torch.jit.script` / `trace` give modules, for `isinstance` checks.

    Subclassing it (the old `@torch.jit.script_method` style) gives an ordinary module.
    """

    def __getattr__(self, name: str):
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name in _IR_ATTRIBUTES:
                raise _ir_missing(self, name) from None
            raise

    def save(self, f, **kwargs) -> None:
        """Raises: TorchScript archives cannot be written (see the module docstring)."""
        raise RuntimeError(_NO_TORCHSCRIPT.format(what="saving"))

    def _save_for_lite_interpreter(self, *args, **kwargs) -> None:
        raise RuntimeError(_NO_TORCHSCRIPT.format(what="saving"))


class RecursiveScriptModule(ScriptModule):
    """What `torch.jit.script(module)` returns: prints as `RecursiveScriptModule(...)`."""

    def _get_name(self) -> str:
        return "RecursiveScriptModule"

    def extra_repr(self) -> str:
        return f"original_name={self.__dict__.get('original_name', '')}"


class TracedModule(ScriptModule):
    """What `torch.jit.trace` makes of submodules: prints with the original class name."""

    def _get_name(self) -> str:
        return self.__dict__.get("original_name", type(self).__name__)

    def extra_repr(self) -> str:
        return f"original_name={self._get_name()}"


class TopLevelTracedModule(TracedModule):
    """What `torch.jit.trace(module, ...)` returns."""


_classes: dict = {}


def _class_for(kind: type, cls: type) -> type:
    """A class that is `kind` first (repr, save) and the module's own class after (forward)."""
    key = (kind, cls)
    if key not in _classes:
        _classes[key] = type(kind.__name__, (kind, cls), {"__module__": kind.__module__})
    return _classes[key]


def _copy_container(v):
    if type(v) in (dict, collections.OrderedDict, set):
        return type(v)(v)
    return v


def _wrap_module(module: Module, kind: type, child_kind: type) -> ScriptModule:
    """A new module object sharing `module`'s parameters, buffers and attributes.

    Containers (parameter/buffer/module dicts, hook dicts) are copied so that registering on
    the result leaves the original alone, as a PyTorch scripted module does; the training
    flag is the result's own. `torch.jit.Attribute(value, type)` attributes become `value`.
    """
    if isinstance(module, ScriptModule):
        return module
    new = object.__new__(_class_for(kind, type(module)))
    state = {k: _copy_container(v) for k, v in module.__dict__.items()}
    state = {k: v.value if isinstance(v, Attribute) else v for k, v in state.items()}
    state["_modules"] = {
        name: None if child is None else _wrap_module(child, child_kind, child_kind)
        for name, child in module._modules.items()
    }
    state["original_name"] = type(module).__name__
    new.__dict__.update(state)
    return new


class ScriptFunction:
    """What `torch.jit.script` / `trace` return for a function: calls it eagerly."""

    def __init__(self, fn, name: str | None = None):
        self._fn = fn
        self.name = name or getattr(fn, "__name__", type(fn).__name__)
        self.qualified_name = f"__torch__.{self.name}"
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __getattr__(self, name: str):
        if name in _IR_ATTRIBUTES:
            raise _ir_missing(self, name)
        raise AttributeError(f"'ScriptFunction' object has no attribute '{name}'")

    def save(self, f, **kwargs) -> None:
        """Raises: TorchScript archives cannot be written (see the module docstring)."""
        raise RuntimeError(_NO_TORCHSCRIPT.format(what="saving"))


def _check_scriptable(obj) -> None:
    if (
        type(obj).__module__ == "builtins"
        and not callable(obj)
        and not isinstance(obj, (list, dict))
    ):
        raise TypeError(f"{type(obj)} is a built-in class")


def script(obj, optimize=None, _frames_up: int = 0, _rcb=None, example_inputs=None):
    """Matches `torch.jit.script` in what it returns; the code still runs as Python.

    A module gives a `RecursiveScriptModule` (submodules too) sharing its parameters and
    buffers; a function gives a `ScriptFunction`; a class, list or dict is returned as is.
    jtorch has no TorchScript: nothing is compiled (use `torch.compile` for speed).
    """
    if isinstance(obj, (ScriptModule, ScriptFunction)):
        return obj
    if isinstance(obj, Module):
        return _wrap_module(obj, RecursiveScriptModule, RecursiveScriptModule)
    _check_scriptable(obj)
    if isinstance(obj, (type, list, dict)):
        return obj
    if callable(obj):
        return ScriptFunction(obj)
    raise RuntimeError("Could not get name of python class object")


def _as_args(example_inputs) -> tuple:
    if example_inputs is None:
        return ()
    if isinstance(example_inputs, tuple):
        return example_inputs
    return (example_inputs,)


@contextlib.contextmanager
def _tracing_scope():
    _tracing[0] += 1
    try:
        yield
    finally:
        _tracing[0] -= 1


def _run_as_pytorch_traces(fn, args: tuple, check_trace: bool, check_inputs) -> None:
    """Calls `fn` as often as PyTorch's trace does, with `is_tracing()` as it reports it.

    PyTorch runs the function once to trace it; with `check_trace` it traces again and
    compares with an eager run, per check input. Programs can see these calls (prints, RNG).
    """
    with _tracing_scope():
        fn(*args)
    if not check_trace:
        return
    for check in [_as_args(c) for c in check_inputs] if check_inputs else [args]:
        with _tracing_scope():
            fn(*check)
        fn(*check)


def trace(
    func,
    example_inputs=None,
    optimize=None,
    check_trace: bool = True,
    check_inputs=None,
    check_tolerance: float = 1e-5,
    strict: bool = True,
    _force_outplace: bool = False,
    _module_class=None,
    _compilation_unit=None,
    example_kwarg_inputs=None,
    _store_inputs: bool = True,
):
    """Matches `torch.jit.trace` in what it returns; runs `func` on the example inputs.

    `func` runs as often as under PyTorch (three times with `check_trace`). Unlike PyTorch,
    the result keeps `func`'s Python control flow: it is not specialised to the path the
    example inputs took (jtorch has no TorchScript).
    """
    if isinstance(func, (ScriptModule, ScriptFunction)):
        return func
    if not callable(func):
        raise RuntimeError("Could not get name of python class object")
    kwargs = dict(example_kwarg_inputs or {})
    _run_as_pytorch_traces(
        lambda *a: func(*a, **kwargs), _as_args(example_inputs), check_trace, check_inputs
    )
    if isinstance(func, Module):
        return _wrap_module(func, TopLevelTracedModule, TracedModule)
    return ScriptFunction(func)


def trace_module(
    mod: Module,
    inputs: dict,
    optimize=None,
    check_trace: bool = True,
    check_inputs=None,
    check_tolerance: float = 1e-5,
    strict: bool = True,
    _force_outplace: bool = False,
    _module_class=None,
    _compilation_unit=None,
    example_inputs_is_kwarg: bool = False,
    _store_inputs: bool = True,
):
    """Matches `torch.jit.trace_module`: runs each named method on its example inputs."""
    if not isinstance(mod, Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    for name, example in inputs.items():
        method = mod if name == "forward" else getattr(mod, name)
        if example_inputs_is_kwarg:
            _run_as_pytorch_traces(
                lambda method=method, ex=example: method(**ex), (), check_trace, None
            )
        else:
            _run_as_pytorch_traces(method, _as_args(example), check_trace, check_inputs)
    return _wrap_module(mod, TopLevelTracedModule, TracedModule)


def freeze(mod, preserved_attrs=None, optimize_numerics: bool = True):
    """Matches `torch.jit.freeze`'s checks; returns `mod` itself (nothing to fold eagerly)."""
    if not isinstance(mod, ScriptModule):
        raise RuntimeError(
            "Freezing expects a ScriptModule as input. Please use "
            "torch.jit.script or torch.jit.trace to script your 'nn.Module'."
        )
    if mod.training:
        raise RuntimeError(
            "Freezing is currently only implemented for modules in eval mode. "
            "Please call .eval() on your module before freezing."
        )
    return mod


def optimize_for_inference(mod, other_methods=None):
    """Matches `torch.jit.optimize_for_inference`'s checks; returns `mod` in eval mode."""
    if not isinstance(mod, ScriptModule):
        raise RuntimeError(
            "optimize_for_inference expects a ScriptModule as input. Please use "
            "torch.jit.script or torch.jit.trace to script your 'nn.Module'."
        )
    return mod.eval()


def run_frozen_optimizations(mod, optimize_numerics: bool = True, preserved_methods=None):
    """Matches `torch.jit.run_frozen_optimizations`: nothing to do eagerly."""


def save(m, f, _extra_files=None) -> None:
    """`torch.jit.save`: `m.save(f)`, which raises (no TorchScript archives in jtorch).

    A plain `nn.Module` has no `save` method: AttributeError, as in PyTorch.
    """
    m.save(f)


def load(f, map_location=None, _extra_files=None, _restore_shapes: bool = False):
    """Raises: jtorch cannot read TorchScript archives (no TorchScript interpreter)."""
    raise RuntimeError(_NO_TORCHSCRIPT.format(what="loading"))


__all__ = [
    "Attribute",
    "RecursiveScriptModule",
    "ScriptFunction",
    "ScriptModule",
    "TopLevelTracedModule",
    "TracedModule",
    "freeze",
    "is_scripting",
    "is_tracing",
    "load",
    "optimize_for_inference",
    "run_frozen_optimizations",
    "save",
    "script",
    "trace",
    "trace_module",
]
