"""`torch.distributed.checkpoint` (DCP): saving and loading state dicts by key.

One process writes every entry (rank 0 of a process group, DTensors gathered first; see
`storage`); loading reads them on every rank, a DTensor keeping its rank's piece.
`state_dict` gives FQN-keyed model and optimizer state dicts.
"""

from . import state_dict  # noqa: F401
from .api import CheckpointException  # noqa: F401
from .default_planner import DefaultLoadPlanner, DefaultSavePlanner  # noqa: F401
from .filesystem import FileSystemReader, FileSystemWriter  # noqa: F401
from .hf_storage import HuggingFaceStorageReader, HuggingFaceStorageWriter  # noqa: F401
from .metadata import BytesStorageMetadata, ChunkStorageMetadata, Metadata, TensorStorageMetadata  # noqa: F401
from .optimizer import load_sharded_optimizer_state_dict  # noqa: F401
from .planner import LoadPlan, LoadPlanner, ReadItem, SavePlan, SavePlanner, WriteItem  # noqa: F401
from .state_dict_loader import load, load_state_dict  # noqa: F401
from .state_dict_saver import async_save, save, save_state_dict  # noqa: F401
from .stateful import Stateful  # noqa: F401
from .storage import StorageReader, StorageWriter  # noqa: F401
