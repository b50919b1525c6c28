"""`torch._dynamo.eval_frame`: `OptimizedModule`, what `torch.compile(module)` returns."""

from __future__ import annotations

from ..nn.modules.module import Module

__all__ = ["OptimizedModule", "innermost_fn", "is_dynamo_supported"]


def is_dynamo_supported() -> bool:
    """Matches `torch._dynamo.eval_frame.is_dynamo_supported`: jtorch compiles everywhere."""
    return True


class OptimizedModule(Module):
    """Matches `torch._dynamo.eval_frame.OptimizedModule`: wraps the compiled module as
    `_orig_mod` (so its state_dict keys start with `_orig_mod.`, as in PyTorch); calling it
    runs the original module's call (hooks included) as one compiled program. Other
    attributes, read or set, are the original module's, `training` included."""

    _opt_mod_attributes = frozenset(
        {
            "_orig_mod",
            "dynamo_ctx",
            "_torchdynamo_orig_callable",
            "forward",
            "_compiled",
            "__dict__",
            "_super_module_initialized",
        }
    )

    def __init__(self, mod: Module, **compile_kwargs):
        object.__setattr__(self, "_super_module_initialized", False)
        super().__init__()
        object.__setattr__(self, "_super_module_initialized", True)
        import jtorch  # the assembled namespace: `jtorch.compile` of a bound method

        self._orig_mod = mod
        self._compiled = jtorch.compile(mod.__call__, **compile_kwargs)
        self._torchdynamo_orig_callable = mod.forward

    def forward(self, *args, **kwargs):
        return self.__dict__["_compiled"](*args, **kwargs)

    @property
    def training(self) -> bool:
        return self._orig_mod.training

    @training.setter
    def training(self, value: bool) -> None:
        if self.__dict__.get("_super_module_initialized"):
            self._orig_mod.training = value

    def __len__(self) -> int:
        try:
            return len(self._orig_mod)
        except TypeError:
            raise TypeError(f"{type(self._orig_mod).__name__} does not support len()") from None

    def __getattr__(self, name: str):
        if name == "_orig_mod":
            return self._modules["_orig_mod"]
        return getattr(self._orig_mod, name)

    def __setattr__(self, name: str, value) -> None:
        if (
            hasattr(type(self), name)
            or name in self._opt_mod_attributes
            or not (self.__dict__.get("_super_module_initialized"))
            or "_orig_mod" not in (self.__dict__.get("_modules", {}))
        ):
            return super().__setattr__(name, value)
        setattr(self._orig_mod, name, value)

    def __delattr__(self, name: str) -> None:
        if hasattr(type(self), name) or name in self._opt_mod_attributes:
            return super().__delattr__(name)
        delattr(self._orig_mod, name)

    def __dir__(self) -> list:
        own = self._orig_mod.__dir__()
        return own + [a for a in super().__dir__() if a not in own]

    def __reduce__(self):
        return (self.__class__, (self._orig_mod,))


def innermost_fn(fn):
    """The function a compiled wrapper (or chain of them) was made from."""
    seen = set()
    while id(fn) not in seen:
        seen.add(id(fn))
        inner = getattr(fn, "_torchdynamo_orig_callable", None)
        if inner is None:
            inner = getattr(fn, "_fn", None)  # jtorch's CompiledFunction
        if inner is None:
            return fn
        fn = inner
    return fn
