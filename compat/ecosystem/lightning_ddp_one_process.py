# compat: rtol=1e-4 atol=1e-5 timeout=300 requires=pytorch_lightning
"""Lightning's DDP strategy on one CPU process (gloo): the process group from the
environment, the model wrapped in DistributedDataParallel, its states synchronised, training
and teardown; the data order kept (no distributed sampler) so both runs see the same
batches."""

import tempfile
import warnings

import numpy as np
import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")

rng = np.random.default_rng(0)
X = rng.standard_normal((32, 4)).astype(np.float32)
Y = rng.standard_normal((32, 1)).astype(np.float32)


class Regressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)
        with torch.no_grad():
            self.layer.weight.copy_(torch.tensor(rng.standard_normal((1, 4)), dtype=torch.float32))
            self.layer.bias.zero_()

    def training_step(self, batch, batch_idx):
        loss = torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1])
        self.log("loss", loss)
        print("step", batch_idx, "loss", round(float(loss), 6),
              "world", self.trainer.world_size, "ddp", type(self.trainer.model).__name__)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.5)


model = Regressor()
with tempfile.TemporaryDirectory() as root:
    trainer = pl.Trainer(accelerator="cpu", devices=1, strategy="ddp", max_epochs=2, logger=False,
                         enable_progress_bar=False, enable_checkpointing=False,
                         enable_model_summary=False, default_root_dir=root,
                         use_distributed_sampler=False)
    trainer.fit(model, DataLoader(TensorDataset(torch.tensor(X), torch.tensor(Y)), batch_size=8))
print("strategy", type(trainer.strategy).__name__, "global step", trainer.global_step)
print("weights", [round(float(v), 6) for v in model.layer.weight.flatten()],
      round(float(model.layer.bias), 6))
print("process group after teardown", torch.distributed.is_initialized())
