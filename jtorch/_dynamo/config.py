"""`torch._dynamo.config`: the compiler's settings, as attributes programs read and set.

They are recorded; jtorch's compiler reads `suppress_errors` (a failed trace falls back to
eager) and `cache_size_limit`. Unknown names raise AttributeError, as in PyTorch, and
`patch` sets some for the duration of a block or function.
"""

from __future__ import annotations

import contextlib
import sys
import types

_DEFAULTS = {
    "suppress_errors": False,
    "verbose": False,
    "cache_size_limit": 8,
    "accumulated_cache_size_limit": 256,
    "recompile_limit": 8,
    "accumulated_recompile_limit": 256,
    "capture_scalar_outputs": False,
    "capture_dynamic_output_shape_ops": False,
    "skip_fwd_side_effects_in_bwd_under_checkpoint": False,
    "optimize_ddp": True,
    "automatic_dynamic_shapes": True,
    "assume_static_by_default": True,
    "force_parameter_static_shapes": True,
    "force_nn_module_property_static_shapes": True,
    "inline_inbuilt_nn_modules": True,
    "allow_unspec_int_on_nn_module": False,
    "error_on_recompile": False,
    "specialize_int": False,
    "specialize_float": False,
    "guard_nn_modules": False,
    "replay_record_enabled": False,
    "cache_size_limit_warning": True,
    "allow_rnn": False,
    "dynamic_shapes": True,
    "use_lazy_graph_module": True,
    "raise_on_ctx_manager_usage": True,
    "enable_cpp_guard_manager": True,
    "prefer_deferred_runtime_asserts_over_guards": False,
    "allow_ignore_mark_dynamic": False,
    "do_not_emit_runtime_asserts": False,
    "compiled_autograd": False,
    "skip_nnmodule_hook_guards": True,
    "report_guard_failures": True,
    "numpy_default_float": "float64",
    "trace_numpy": True,
    "rewrite_assert_with_torch_assert": True,
    "enable_compiler_collectives": False,
    "install_free_tensors": False,
}


class _Config(types.ModuleType):
    def __getattr__(self, name: str):
        raise AttributeError(f"torch._dynamo.config.{name} does not exist")

    def __setattr__(self, name: str, value) -> None:
        if name not in _DEFAULTS and not name.startswith("_"):
            raise AttributeError(f"torch._dynamo.config.{name} does not exist")
        super().__setattr__(name, value)

    def get_config_copy(self) -> dict:
        return {k: self.__dict__[k] for k in _DEFAULTS}

    def save_config(self) -> dict:
        return self.get_config_copy()

    def load_config(self, saved: dict) -> None:
        for k, v in saved.items():
            setattr(self, k, v)

    def patch(self, arg1=None, arg2=None, **kwargs):
        """Sets settings inside a `with` block or a decorated function."""
        changes = (
            dict(arg1) if isinstance(arg1, dict) else ({arg1: arg2} if arg1 is not None else {})
        )
        changes.update(kwargs)
        for k in changes:
            if k not in _DEFAULTS:
                raise AttributeError(f"torch._dynamo.config.{k} does not exist")
        config = self

        class _Patch(contextlib.ContextDecorator):
            def __enter__(self):
                self.saved = {k: getattr(config, k) for k in changes}
                for k, v in changes.items():
                    setattr(config, k, v)

            def __exit__(self, *exc):
                for k, v in self.saved.items():
                    setattr(config, k, v)

        return _Patch()


_module = sys.modules[__name__]
_module.__class__ = _Config
for _k, _v in _DEFAULTS.items():
    setattr(_module, _k, _v)
