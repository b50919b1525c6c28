"""The kernels behind `torch.nn.functional`, one file per concept.

Importing this package declares them all (`jtorch._ops` imports it with the other families).
"""

from . import activation, normalization, linear, embedding, padding, distance  # noqa: F401
from . import dropout, loss, conv, pooling, sampling  # noqa: F401
from . import rnn, attention  # noqa: F401
