"""`torch.utils.data.graph`: the graph of DataPipes a DataPipe is built from."""

from __future__ import annotations

from .datapipes.datapipe import IterDataPipe, MapDataPipe

__all__ = ["traverse_dps"]


def traverse_dps(datapipe) -> dict:
    """Matches `torch.utils.data.graph.traverse_dps`: `{id(dp): (dp, sub-graph)}`."""

    def walk(dp, seen: set) -> dict:
        seen = seen | {id(dp)}
        children = {}
        for value in vars(dp).values():
            for v in value if isinstance(value, (list, tuple)) else [value]:
                if isinstance(v, (IterDataPipe, MapDataPipe)) and id(v) not in seen:
                    children.update(walk(v, seen))
        return {id(dp): (dp, children)}

    return walk(datapipe, set())
