"""`torch.fx._symbolic_trace`: FX tracing, which never runs in jtorch."""

from __future__ import annotations

from ._unavailable import NOT_AVAILABLE

__all__ = ["Tracer", "symbolic_trace", "wrap", "is_fx_tracing", "is_fx_symbolic_tracing"]


def is_fx_tracing() -> bool:
    """Matches `torch.fx._symbolic_trace.is_fx_tracing`: False (no FX trace runs)."""
    return False


def is_fx_symbolic_tracing() -> bool:
    return False


class Tracer:
    """The type `torch.fx.Tracer`; tracing with it raises (see `torch.fx`)."""

    def __init__(self, autowrap_modules=(), autowrap_functions=(), param_shapes_constant=False):
        self.autowrap_modules, self.autowrap_functions = autowrap_modules, autowrap_functions

    def trace(self, root, concrete_args=None):
        raise RuntimeError(NOT_AVAILABLE.format(what="tracing (Tracer.trace)"))

    def is_leaf_module(self, m, module_qualified_name: str) -> bool:
        """PyTorch's rule: torch.nn modules other than Sequential are leaves."""
        from ..nn import Sequential

        return m.__module__.startswith(("torch.nn", "torch.ao.nn", "jtorch.nn")) and (
            not isinstance(m, Sequential)
        )


def symbolic_trace(root, concrete_args=None):
    """Raises: see `torch.fx`."""
    raise RuntimeError(NOT_AVAILABLE.format(what="symbolic_trace"))


def wrap(fn_or_name):
    """Matches `torch.fx.wrap`: marks a function as a leaf of FX traces (which jtorch never
    makes); returns its argument. As in PyTorch, only at the top level of a module."""
    import inspect

    caller = inspect.currentframe().f_back
    if caller is None or caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    return fn_or_name
