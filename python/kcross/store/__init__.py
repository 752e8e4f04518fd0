"""Result database: location, schema migrations and run/result storage."""

from .location import Target, default_path, resolve
from .opening import Store, Stores, store_for_writing, stores
from .reading import RunSummary, StoredRun
from .writing import MARK_STATUSES, DuplicateImport, run_times

__all__ = ["MARK_STATUSES", "DuplicateImport", "RunSummary", "Store", "StoredRun", "Stores",
           "Target", "default_path", "resolve", "run_times", "store_for_writing", "stores"]
