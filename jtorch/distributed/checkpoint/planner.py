"""`torch.distributed.checkpoint.planner`: the planner interfaces.

jtorch's `save`/`load` run in one process and read or write every entry, so a planner here
carries only the options that change what is loaded (`allow_partial_load`), not the
plan/item protocol PyTorch's collective planning needs.
"""

from __future__ import annotations

import dataclasses
from enum import Enum, auto

__all__ = [
    "LoadPlan",
    "LoadPlanner",
    "ReadItem",
    "SavePlan",
    "SavePlanner",
    "WriteItem",
    "WriteItemType",
    "LoadItemType",
]


class WriteItemType(Enum):
    TENSOR = auto()
    SHARD = auto()
    BYTE_IO = auto()


class LoadItemType(Enum):
    TENSOR = auto()
    BYTE_IO = auto()


@dataclasses.dataclass(frozen=True)
class WriteItem:
    index: object
    type: WriteItemType
    tensor_data: object = None


@dataclasses.dataclass(frozen=True)
class ReadItem:
    type: LoadItemType
    dest_index: object
    dest_offsets: tuple
    storage_index: object
    storage_offsets: tuple
    lengths: tuple


@dataclasses.dataclass(frozen=True)
class SavePlan:
    items: list
    storage_data: object = None
    planner_data: object = None
    usable: bool = True


@dataclasses.dataclass
class LoadPlan:
    items: list
    storage_data: object = None
    planner_data: object = None


class SavePlanner:
    """The base of save planners."""


class LoadPlanner:
    """The base of load planners."""

    allow_partial_load = False
