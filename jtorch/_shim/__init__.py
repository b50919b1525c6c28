"""A directory holding a `torch` package that is jtorch: put on `PYTHONPATH` by the runner.

`python -m jtorch script.py` prepends this directory to the `PYTHONPATH` it passes on,
so child interpreters (multiprocessing's spawn and forkserver start methods, DataLoader
workers, `subprocess` runs of Python) import jtorch when they `import torch`.
"""
