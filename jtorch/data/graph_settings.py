"""`torch.utils.data.graph_settings`: settings applied across a graph of DataPipes.

A graph is the DataPipe and, recursively, the DataPipes its attributes hold (a `Shuffler`
holds the pipe it shuffles).
"""

from __future__ import annotations

import warnings

from .graph import traverse_dps

__all__ = ["apply_random_seed", "apply_shuffle_settings", "get_all_graph_pipes"]


def get_all_graph_pipes(graph: dict) -> list:
    """Every DataPipe of a `traverse_dps` graph, each once."""
    out, seen = [], set()

    def visit(g: dict) -> None:
        for key, (dp, sub) in g.items():
            if key not in seen:
                seen.add(key)
                out.append(dp)
                visit(sub)

    visit(graph)
    return out


def _is_shuffler(dp) -> bool:
    return callable(getattr(type(dp), "set_shuffle", None)) and callable(
        getattr(type(dp), "set_seed", None)
    )


def apply_shuffle_settings(datapipe, shuffle: bool | None = None):
    """Turns every shuffler of the graph on or off; with `shuffle=True` and none there, one is
    added at the end, as PyTorch does (with its warning)."""
    if shuffle is None:
        return datapipe
    shufflers = [dp for dp in get_all_graph_pipes(traverse_dps(datapipe)) if _is_shuffler(dp)]
    if not shufflers and shuffle:
        warnings.warn(
            "`shuffle=True` was set, but the datapipe does not contain a `Shuffler`. "
            "Adding one at the end. Be aware that the default buffer size might not "
            "be sufficient for your task.",
            stacklevel=2,
        )
        datapipe = datapipe.shuffle()
        shufflers = [datapipe]
    for dp in shufflers:
        dp.set_shuffle(shuffle)
    return datapipe


def apply_random_seed(datapipe, rng):
    """Seeds every shuffler of the graph from `rng` (a torch Generator)."""
    import jtorch

    for dp in get_all_graph_pipes(traverse_dps(datapipe)):
        if _is_shuffler(dp):
            seed = int(jtorch.empty((), dtype=jtorch.int64).random_(generator=rng).item())
            dp.set_seed(seed)
    return datapipe
