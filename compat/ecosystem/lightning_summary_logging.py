# compat: rtol=5e-3 atol=1e-3 timeout=300 requires=pytorch_lightning slow
"""Lightning with its defaults where users keep them: the model summary (parameters, sizes,
FLOPs from example_input_array), a CSVLogger whose metrics.csv is read back, gradient
accumulation with clipping, max_steps, and bf16-mixed precision on the CPU."""

import csv
import os
import tempfile
import warnings

import numpy as np
import pytorch_lightning as pl
import torch
from pytorch_lightning.loggers import CSVLogger
from pytorch_lightning.utilities.model_summary import ModelSummary
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")

rng = np.random.default_rng(3)
X = rng.standard_normal((40, 6)).astype(np.float32)
Y = rng.integers(0, 3, size=40)


class Net(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(),
                                           torch.nn.Linear(16, 8))
        self.head = torch.nn.Linear(8, 3)
        self.example_input_array = torch.zeros(4, 6)
        init = np.random.default_rng(4)
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.tensor(0.3 * init.standard_normal(tuple(p.shape)),
                                     dtype=torch.float32))

    def forward(self, x):
        return self.head(torch.relu(self.encoder(x)))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self(x), y)
        self.log("loss", loss, on_step=True, on_epoch=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", torch.nn.functional.cross_entropy(self(x), y))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.01)


def loaders():
    ds = TensorDataset(torch.tensor(X), torch.tensor(Y))
    return DataLoader(ds, batch_size=8), DataLoader(ds, batch_size=20)


summary = ModelSummary(Net(), max_depth=2)
print(summary)
print("total params", summary.total_parameters, "trainable", summary.trainable_parameters,
      "flops", summary.total_flops)

with tempfile.TemporaryDirectory() as root:
    for precision in ("32-true", "bf16-mixed"):
        model = Net()
        logger = CSVLogger(root, name=precision, version=0)
        trainer = pl.Trainer(accelerator="cpu", devices=1, max_steps=4, max_epochs=10,
                             accumulate_grad_batches=2, gradient_clip_val=0.5,
                             precision=precision, logger=logger, log_every_n_steps=1,
                             enable_progress_bar=False, enable_checkpointing=False,
                             val_check_interval=4, num_sanity_val_steps=0)
        train, val = loaders()
        trainer.fit(model, train, val)
        print(precision, "global step", trainer.global_step, "epoch", trainer.current_epoch)
        with open(os.path.join(logger.log_dir, "metrics.csv")) as f:
            rows = list(csv.DictReader(f))
        print(precision, "csv columns", sorted(rows[0]))
        for row in rows:
            print(precision, {k: (round(float(v), 5) if v not in ("",) and "." in v else v)
                              for k, v in sorted(row.items()) if v != ""})
        with torch.no_grad():
            print(precision, "logits", [round(float(v), 4)
                                        for v in model(torch.tensor(X[:2])).flatten()])
