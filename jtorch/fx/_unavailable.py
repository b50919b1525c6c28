"""The one message every FX entry point raises: jtorch traces with jax, not with FX."""

NOT_AVAILABLE = (
    "torch.fx {what} is not available in jtorch: jtorch traces programs with jax "
    "(jtorch.compile, jtorch.interop.functional), not with FX graphs"
)
