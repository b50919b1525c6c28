"""`torch.utils.data.datapipes.iter`."""

from . import combinatorics  # noqa: F401
from .combinatorics import SamplerIterDataPipe as Sampler  # noqa: F401
from .combinatorics import ShufflerIterDataPipe as Shuffler  # noqa: F401
