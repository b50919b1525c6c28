"""Unit-test set-up: see the repository's root `conftest.py` (XLA options, compilation
cache, memory maps), which pytest loads for every test."""
