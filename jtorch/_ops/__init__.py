"""The op families. Importing this package declares every op and installs Tensor methods."""

from . import _registry
from . import pointwise, views, creation, indexing, reduction  # noqa: F401

_registry.install_methods()
