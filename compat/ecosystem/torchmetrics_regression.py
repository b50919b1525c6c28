# compat: rtol=1e-4 atol=1e-5 timeout=300 requires=torchmetrics slow
"""torchmetrics regression metrics as users run them: per-batch forward values, epoch
values from update/compute, multi-output R2, a MetricCollection with clone(prefix=...),
state_dict of a metric with persistent states, and the functional forms."""

import warnings

import numpy as np
import torch
from torchmetrics import MeanAbsoluteError, MeanSquaredError, MetricCollection, PearsonCorrCoef
from torchmetrics import R2Score
from torchmetrics.functional import (
    mean_absolute_error, mean_squared_error, pearson_corrcoef, r2_score,
)

rng = np.random.default_rng(1)


def show(name, value):
    v = value.detach().cpu()
    if v.ndim == 0:
        print(f"{name}: {v.item():.6f} {v.dtype}")
    else:
        print(f"{name}: {[round(float(x), 6) for x in v.flatten()]} {tuple(v.shape)} {v.dtype}")


batches = []
for _ in range(3):
    target = rng.standard_normal(32).astype(np.float32)
    preds = (0.8 * target + 0.3 * rng.standard_normal(32) + 0.1).astype(np.float32)
    batches.append((torch.tensor(preds), torch.tensor(target)))

mse, rmse, mae = MeanSquaredError(), MeanSquaredError(squared=False), MeanAbsoluteError()
r2, pearson = R2Score(), PearsonCorrCoef()
for i, (p, t) in enumerate(batches):
    show(f"batch {i} mse", mse(p, t))
    show(f"batch {i} pearson", pearson(p, t))
    rmse.update(p, t)
    mae.update(p, t)
    r2.update(p, t)
show("epoch mse", mse.compute())
show("epoch rmse", rmse.compute())
show("epoch mae", mae.compute())
show("epoch r2", r2.compute())
show("epoch pearson", pearson.compute())

# Multi-output R2 (two targets per sample), uniform and raw averaging.
t2 = rng.standard_normal((40, 2)).astype(np.float32)
p2 = (t2 * np.array([0.9, 0.5], np.float32) + 0.2 * rng.standard_normal((40, 2))).astype(np.float32)
show("r2 uniform", R2Score(multioutput="uniform_average")(torch.tensor(p2), torch.tensor(t2)))
show("r2 raw", R2Score(multioutput="raw_values")(torch.tensor(p2), torch.tensor(t2)))
show("r2 adjusted", R2Score(adjusted=3)(torch.tensor(p2[:, 0]), torch.tensor(t2[:, 0])))

# A collection, cloned for validation with a prefix.
train = MetricCollection([MeanSquaredError(), MeanAbsoluteError()])
val = train.clone(prefix="val_")
for p, t in batches:
    train.update(p, t)
    val.update(p * 2, t)
for k, v in sorted(train.compute().items()):
    show(k, v)
for k, v in sorted(val.compute().items()):
    show(k, v)
val.reset()
val.update(*batches[0])
for k, v in sorted(val.compute().items()):
    show("after reset " + k, v)

# Metric states in a state_dict when persistent.
m = MeanSquaredError()
m.persistent(True)
m.update(*batches[0])
sd = m.state_dict()
print("state keys", sorted(sd))
show("sum_squared_error state", sd["sum_squared_error"])
restored = MeanSquaredError()
restored.persistent(True)
restored.load_state_dict(sd)
# torchmetrics warns that compute() comes before any update(): the states were loaded instead.
warnings.filterwarnings("ignore", message=".*was called before the ``update`` method")
show("restored mse", restored.compute())

# Functional forms.
p, t = batches[0]
show("functional mse", mean_squared_error(p, t))
show("functional rmse", mean_squared_error(p, t, squared=False))
show("functional mae", mean_absolute_error(p, t))
show("functional r2", r2_score(p, t))
show("functional pearson", pearson_corrcoef(p, t))
