"""Grad modes: `no_grad`, `enable_grad`, `set_grad_enabled`, `inference_mode`.

Thread-local as in PyTorch; each works as a context manager and a decorator.
"""

from __future__ import annotations

import functools
import inspect
import threading

from .. import _tensor

_state = threading.local()


def is_grad_enabled() -> bool:
    """Matches `torch.is_grad_enabled`."""
    return getattr(_state, "enabled", True)


def _set(enabled: bool) -> None:
    _state.enabled = bool(enabled)


def is_inference_mode_enabled() -> bool:
    return getattr(_state, "inference", False)


class _Mode:
    """A grad-mode switch usable as `with mode():` and as `@mode()` / `@mode`."""

    enabled: bool = True

    def __call__(self, fn=None):
        if fn is None:
            return self
        if inspect.isgeneratorfunction(fn):

            @functools.wraps(fn)
            def gen_wrapper(*args, **kwargs):
                # The mode holds while the generator runs, not while its caller does.
                gen = fn(*args, **kwargs)
                try:
                    with self.clone():
                        value = gen.send(None)
                    while True:
                        try:
                            sent = yield value
                        except GeneratorExit:
                            with self.clone():
                                gen.close()
                            raise
                        except BaseException as e:  # noqa: B036 - forwarded to the generator
                            with self.clone():
                                value = gen.throw(e)
                        else:
                            with self.clone():
                                value = gen.send(sent)
                except StopIteration as stop:
                    return stop.value

            return gen_wrapper

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper

    def clone(self):
        return type(self)()

    def __enter__(self):
        self.prev = is_grad_enabled()
        _set(self.enabled)
        return None

    def __exit__(self, *exc):
        _set(self.prev)
        return False


class no_grad(_Mode):
    """Matches `torch.no_grad`."""

    enabled = False

    def __new__(cls, orig_func=None):
        self = super().__new__(cls)
        if orig_func is not None and callable(orig_func):
            return self(orig_func)
        return self


class enable_grad(_Mode):
    """Matches `torch.enable_grad`."""

    enabled = True

    def __new__(cls, orig_func=None):
        self = super().__new__(cls)
        if orig_func is not None and callable(orig_func):
            return self(orig_func)
        return self


class set_grad_enabled(_Mode):
    """Matches `torch.set_grad_enabled`: takes effect at once, and also works as a context."""

    def __init__(self, mode: bool):
        self.prev = is_grad_enabled()
        self.enabled = bool(mode)
        _set(mode)

    def __call__(self, fn=None):
        # As a decorator it must not switch the mode where it is applied (PyTorch restores).
        _set(self.prev)
        return super().__call__(fn)

    def clone(self):
        return set_grad_enabled(self.enabled)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _set(self.prev)
        return False


class inference_mode(_Mode):
    """Matches `torch.inference_mode`: gradients off; tensors made inside are inference
    tensors (`is_inference()`), though PyTorch's limits on using them outside are not enforced."""

    def __new__(cls, mode=True):
        self = super().__new__(cls)
        if callable(mode):
            self.mode = True
            return self(mode)
        self.mode = bool(mode)
        return self

    def __init__(self, mode=True):
        pass

    @property
    def enabled(self):
        return not self.mode

    def clone(self):
        return inference_mode(self.mode)

    def __enter__(self):
        self.prev_inf = is_inference_mode_enabled()
        _state.inference = self.mode
        _tensor.inference_check = is_inference_mode_enabled  # tensors made now: is_inference()
        return super().__enter__()

    def __exit__(self, *exc):
        _state.inference = self.prev_inf
        return super().__exit__(*exc)
