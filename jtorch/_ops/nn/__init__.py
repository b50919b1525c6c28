"""The kernels behind `torch.nn.functional`, one file per concept.

Importing this package declares them all (`jtorch._ops` imports it with the other families).
"""

from . import (  # noqa: F401  # noqa: F401  # noqa: F401
    activation,
    attention,
    conv,
    distance,
    dropout,
    embedding,
    linear,
    loss,
    normalization,
    padding,
    pooling,
    rnn,
    sampling,
)
