"""`torch.nested`: nested (jagged) tensors; not available in jtorch, whose tensors are jax
arrays of one shape (pad, or pack with `torch.nn.utils.rnn`, instead)."""

from .._unsupported import unsupported_module_getattr

__getattr__ = unsupported_module_getattr(
    "torch.nested",
    "jtorch has no nested tensors (jax arrays have one shape); pad the "
    "sequences or use torch.nn.utils.rnn.pack_padded_sequence",
)
