"""`torch.distributed.algorithms.model_averaging`."""
