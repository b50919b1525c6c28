"""`torch.distributed.tensor.debug`: counting the collectives a piece of code runs.

`CommDebugMode` counts, while it is active, each collective operator run by this process:
the process-group API's (`torch.ops.c10d.allreduce_` for `dist.all_reduce`, ...) and those
DTensor's redistributions issue (`torch.ops.c10d_functional.all_reduce` for a `Partial` made
whole, `all_gather_into_tensor` for a `Shard` gathered, `reduce_scatter_tensor`), as
PyTorch's mode does. Its per-module tables and JSON dumps are not implemented.
"""

from __future__ import annotations

from collections import defaultdict

from ... import _comm_debug

__all__ = ["CommDebugMode", "visualize_sharding"]


def _key(namespace: str, name: str):
    from .... import ops

    return getattr(getattr(ops, namespace), name)


class CommDebugMode:
    """Matches `torch.distributed.tensor.debug.CommDebugMode` (see the module doc)."""

    def __init__(self):
        self.comm_counts: dict = defaultdict(int)
        self.comm_registry = {
            _key(ns, name) for ns, names in _comm_debug.COLLECTIVES.items() for name in names
        }

    def _note(self, namespace: str, name: str) -> None:
        self.comm_counts[_key(namespace, name)] += 1

    def get_total_counts(self) -> int:
        return sum(self.comm_counts.values())

    def get_comm_counts(self) -> dict:
        """The number of times each collective operator ran, keyed by `torch.ops` operator."""
        return self.comm_counts

    def __enter__(self):
        self.comm_counts.clear()
        _comm_debug.LISTENERS.append(self._note)
        return self

    def __exit__(self, *exc) -> None:
        _comm_debug.LISTENERS.remove(self._note)

    def _unsupported(self, what: str):
        raise NotImplementedError(
            f"CommDebugMode.{what}: jtorch counts collectives "
            f"(get_comm_counts, get_total_counts) but keeps no "
            f"per-module tracing tables"
        )

    def get_parameter_info(self):
        self._unsupported("get_parameter_info")

    def get_sharding_info(self):
        self._unsupported("get_sharding_info")

    def generate_comm_debug_tracing_table(self, noise_level: int = 3):
        self._unsupported("generate_comm_debug_tracing_table")

    def generate_json_dump(self, file_name: str = "comm_mode_log.json", noise_level: int = 3):
        self._unsupported("generate_json_dump")

    def log_comm_debug_tracing_table_to_file(
        self, file_name: str = "comm_mode_log.txt", noise_level: int = 3
    ):
        self._unsupported("log_comm_debug_tracing_table_to_file")

    def __repr__(self) -> str:
        return f"CommDebugMode(get_total_counts()={self.get_total_counts()})"


def visualize_sharding(dtensor, header: str = "", use_rich: bool = False):
    """Raises: jtorch does not draw sharding tables."""
    raise NotImplementedError(
        "torch.distributed.tensor.debug.visualize_sharding is not "
        "implemented in jtorch; print `dtensor.placements` and "
        "`dtensor.to_local().shape` instead"
    )
