"""`jtorch.func`: PyTorch's function transforms, on jax's.

`grad`, `vjp`, `jvp`, `jacrev`, `jacfwd`, `hessian` and `vmap` trace the user
function with Tensors over jax tracers and run the matching jax transform; they
compose with each other and with `jtorch.compile` as jax transforms do.
`functional_call` and `stack_module_state` work on any module-shaped object.
"""

from ._batch_norm import replace_all_batch_norm_modules_
from ._functional_call import functional_call, stack_module_state
from ._transforms import (
    functionalize,
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    vjp,
)
from ._vmap import vmap

__all__ = [
    "grad",
    "grad_and_value",
    "vjp",
    "jvp",
    "jacrev",
    "jacfwd",
    "hessian",
    "linearize",
    "vmap",
    "functional_call",
    "stack_module_state",
    "functionalize",
    "replace_all_batch_norm_modules_",
]
