"""`torch.distributed._composable`: PyTorch's former home of `fully_shard`."""
