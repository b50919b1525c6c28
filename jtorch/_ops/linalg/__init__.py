"""`torch.linalg` and the legacy torch-level linear algebra (det, svd, qr, lu, ...), one file
per concept (as PyTorch's `torch.linalg` documentation groups them).

Decompositions run on `jax.lax.linalg` / `jnp.linalg`, which on CPU call the same LAPACK
routines as PyTorch (getrf, potrf, geqrf, syevd, gesdd, geev), so factors usually agree to
rounding, signs included. Errors that depend on the values (a singular matrix, a matrix that
is not positive-definite) cannot be raised from inside a compiled kernel: the `_ex` variants
report them in `info` as PyTorch's do, and the published functions check it after the call
(the `after=` check on their declarations, built by `checks.info_check`), raising
`LinAlgError` as PyTorch does; under tracing (compile, vmap) the plain variants return the
kernel's nan/inf instead. The products of `torch.linalg` (cross, multi_dot, vecdot) are
with the other products in `_ops/matmul.py`.

Importing this package declares them all (`jtorch._ops` imports it with the other families).
"""

from . import checks, decompositions, lowrank, matrix_functions, norms, solvers, spectral  # noqa: F401
