"""The script corpus: unmodified PyTorch programs under `python -m jtorch` vs under PyTorch.

Every `compat/scripts/*.py`, and every `examples/*.py` with a `# compat:` header (the
README's examples are corpus programs too, named `examples/<file>`), runs under PyTorch and
under jtorch and must print the same (see `compat/corpus.py` for how outputs are compared
and the header's options). Scripts make their data with their own formulas or numpy
(jtorch's random streams are not PyTorch's); where a random initialisation reaches the
printed numbers the tolerance is loose, where nothing random does it is tight.

Knobs (environment variables):
  JTORCH_SCRIPTS=<regex>        only scripts whose name matches (`all`: every script)
  JTORCH_SCRIPTS_UPDATE=1       write this run's results into compat/scripts_status.json
  JTORCH_SCRIPTS_WORKERS=n      scripts run ahead in parallel, two processes each (default 2)
  JTORCH_SCRIPTS_TORCH_CACHE=0  rerun PyTorch instead of reusing its recorded output
                                (committed in compat/scripts_torch_outputs/)

The summary line `compat scripts: K/N run, M/N match` is printed by conftest.
"""

import glob
import os

import pytest

torch = pytest.importorskip("torch")

from compat.corpus import HERE, ROOT, Corpus, first_difference, has_header, line_matches  # noqa

_entries = {os.path.basename(p): p for p in glob.glob(os.path.join(HERE, "scripts", "*.py"))}
_entries.update(
    {
        "examples/" + os.path.basename(p): p
        for p in glob.glob(os.path.join(ROOT, "examples", "*.py"))
        if has_header(p)
    }
)

CORPUS = Corpus(
    "scripts",
    _entries,
    os.path.join(HERE, "scripts_status.json"),
    os.path.join(HERE, "scripts_torch_outputs"),
    "JTORCH_SCRIPTS",
)
RESULTS = CORPUS.results  # script -> status record, read by the summary hook in conftest


@pytest.mark.parametrize("name", CORPUS.names)
def test_script(name):
    CORPUS.run_test(name)


def test_line_matching():
    """The comparison itself: tolerance for floats only, exact text and integers."""
    assert line_matches("loss 0.512 step 3", "loss 0.500 step 3", 0.05, 0)
    assert not line_matches("loss 0.512 step 4", "loss 0.500 step 3", 0.05, 0)
    assert not line_matches("loss 0.6", "loss 0.5", 0.05, 0)
    assert not line_matches("acc: False", "acc: True", 1, 1)
    assert line_matches("tensor([-0.0000,  1.0000])", "tensor([ 0.0000,  1.0001])", 1e-3, 1e-5)
    assert not line_matches("torch.Size([3, 4])", "torch.Size([3, 5])", 1, 1)
    assert line_matches("fc1.weight 2.69e-03", "fc1.weight 2.70e-03", 0.01, 0)
    assert not line_matches("a 1", "a 1.0", 1, 1)
    assert first_difference("a\nb\n", "a\nc\nd\n", 0, 0) == (2, "b", "c")
    assert first_difference("a\n", "a\nd\n", 0, 0) == (2, "<missing>", "d")
