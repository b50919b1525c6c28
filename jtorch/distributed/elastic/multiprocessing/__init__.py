"""`torch.distributed.elastic.multiprocessing` (today: `errors`)."""
