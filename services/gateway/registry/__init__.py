"""The gateway's registry: the one write path (store.py) and the per-resource hooks every write runs (hooks.py)."""
