"""The ecosystem: real third-party libraries, used as their users do, under jtorch and PyTorch.

Every `compat/ecosystem/*.py` is a small program that drives a library (transformers,
accelerate, Lightning, torchmetrics, safetensors, einops, x-transformers) the way its users
do: tiny configurations, synthetic data, no downloads. It runs under PyTorch and under
`python -m jtorch` and must print the same (see `compat/corpus.py`); the libraries are not
edited. Weights and data come from numpy, so both runs compute on the same numbers and their
logits, losses and greedy generations can be compared.

Knobs (environment variables):
  JTORCH_ECOSYSTEM=<regex>        only cases whose name matches, slow ones included
  JTORCH_ECOSYSTEM=all            every case (CI runs the cases without `slow`)
  JTORCH_ECOSYSTEM_UPDATE=1       write this run's results into compat/ecosystem_status.json
  JTORCH_ECOSYSTEM_WORKERS=n      cases run ahead in parallel, two processes each (default 2)
  JTORCH_ECOSYSTEM_TORCH_CACHE=0  rerun PyTorch instead of reusing its recorded output
                                  (committed in compat/ecosystem_torch_outputs/)

The summary line `compat ecosystem: K/N pass` is printed by conftest.
"""

import glob
import os

import pytest

torch = pytest.importorskip("torch")

from compat.corpus import HERE, Corpus  # noqa: E402

# Files whose name starts with "_" are helpers the cases import, not cases.
_entries = {
    os.path.basename(p): p
    for p in glob.glob(os.path.join(HERE, "ecosystem", "*.py"))
    if not os.path.basename(p).startswith("_")
}

CORPUS = Corpus(
    "ecosystem",
    _entries,
    os.path.join(HERE, "ecosystem_status.json"),
    os.path.join(HERE, "ecosystem_torch_outputs"),
    "JTORCH_ECOSYSTEM",
)
RESULTS = CORPUS.results  # case -> status record, read by the summary hook in conftest


@pytest.mark.parametrize("name", CORPUS.names)
def test_case(name):
    CORPUS.run_test(name)
