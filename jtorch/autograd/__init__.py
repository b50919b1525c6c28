"""`jtorch.autograd`: grad modes (the eager tape arrives with the autograd work)."""

from .grad_mode import (  # noqa: F401
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
    set_grad_enabled,
)
