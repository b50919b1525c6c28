"""`torch.storage`: `UntypedStorage` and `TypedStorage` (see `jtorch/_storage.py`)."""

from ._storage import LEGACY_STORAGES, TypedStorage, UntypedStorage  # noqa: F401
from ._storage import warn_typed_storage_removal as _warn_typed_storage_removal  # noqa: F401

__all__ = ["TypedStorage", "UntypedStorage"]


def _get_dtype_from_pickle_storage_type(pickle_storage_type: str):
    """The dtype of a legacy storage class name (`"FloatStorage"` -> torch.float32)."""
    for dt, cls in LEGACY_STORAGES.items():
        if cls.__name__ == pickle_storage_type:
            return dt
    raise KeyError(f'pickle storage type "{pickle_storage_type}" is not recognized')
