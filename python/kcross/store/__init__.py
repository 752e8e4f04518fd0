"""The result database: where it lives (location), opening it safely (db), its tables and
their migrations, and the Store (opening) that reads (reading) and writes (writing) runs,
each record read back checked by one set of rules (records).  The reads of one command
alone are modules named for it: history (``kcross history``), transfer (push, pull).

The store imports nothing of kcross above the foundations (errors, schema, stats,
numtext, fingerprint): tests/test_layers.py."""

from .location import Target, default_path, resolve
from .opening import Store, Stores, store_for_writing, stores
from .reading import RunSummary, StoredRun
from .writing import MARK_STATUSES, DuplicateImport, run_times

__all__ = ["MARK_STATUSES", "DuplicateImport", "RunSummary", "Store", "StoredRun", "Stores",
           "Target", "default_path", "resolve", "run_times", "store_for_writing", "stores"]
