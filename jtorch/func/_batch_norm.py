"""`torch.func.replace_all_batch_norm_modules_`: BatchNorm without running statistics."""

from __future__ import annotations


def _without_running_stats(module) -> None:
    from ..nn.modules.batchnorm import _BatchNorm

    if isinstance(module, _BatchNorm) and module.track_running_stats:
        module.running_mean = None
        module.running_var = None
        module.num_batches_tracked = None
        module.track_running_stats = False


def replace_all_batch_norm_modules_(root):
    """Matches `torch.func.replace_all_batch_norm_modules_`: in place, every BatchNorm in
    `root` stops tracking running statistics (so it normalizes with batch statistics, which
    `vmap` over a batch of models needs); returns `root`."""
    _without_running_stats(root)
    for module in root.modules():
        _without_running_stats(module)
    return root
