"""`import torch` in a child of `python -m jtorch`: becomes jtorch (see `jtorch._shim`).

Python runs this file while importing `torch`; it installs the alias and puts jtorch in
`sys.modules['torch']`, which the import statement then returns. `torch.x.y` imports go
through the alias's meta-path finder.
"""

import sys

# Only as the top-level `torch`: importing it as `jtorch._shim.torch` must change nothing.
if __name__ == "torch":
    import jtorch as _jtorch

    _jtorch.install_as_torch()
    sys.modules["torch"] = _jtorch
