"""Result database: location, schema migrations and run/result storage."""

from .location import Target, default_path, resolve
from .repo import RunSummary, Store, StoredRun

__all__ = ["RunSummary", "Store", "StoredRun", "Target", "default_path", "resolve"]
