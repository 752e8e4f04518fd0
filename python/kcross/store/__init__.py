"""Result database: location, schema migrations and run/result storage."""

from .location import Target, default_path, resolve
from .repo import (
           MARK_STATUSES,
           DuplicateImport,
           RunSummary,
           Store,
           StoredRun,
           run_times,
)

__all__ = ["MARK_STATUSES", "DuplicateImport", "RunSummary", "Store", "StoredRun", "Target",
           "default_path", "resolve", "run_times"]
