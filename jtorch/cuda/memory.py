"""`torch.cuda.memory`: the memory statistics functions (see `torch.cuda`)."""

from . import (  # noqa: F401
    empty_cache, get_per_process_memory_fraction, max_memory_allocated, max_memory_cached,
    max_memory_reserved, mem_get_info, memory_allocated, memory_cached, memory_reserved,
    memory_stats, memory_stats_as_nested_dict, memory_summary, reset_max_memory_allocated,
    reset_peak_memory_stats, set_per_process_memory_fraction,
)
