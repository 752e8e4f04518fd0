"""What a run measures when not told otherwise: kcross-harness's own defaults and the
ranges it accepts (harness/main.c, parse()), and ``kcross run``'s processes.

The ranges are the harness's own, checked by kcross too so that a run the harness would
refuse is refused before anything starts.  Light on purpose: the parsers' help texts
quote these figures on every start.
"""

from __future__ import annotations

DEFAULT_SAMPLES, QUICK_SAMPLES, SAMPLES_RANGE = 201, 11, (3, 100_000)
DEFAULT_WARMUP_MS, QUICK_WARMUP_MS, WARMUP_MS_RANGE = 200, 20, (0, 100_000)
DEFAULT_MIN_BATCH_MS, MIN_BATCH_MS_RANGE = 2, (0.01, 10_000)
CPU_RANGE = (0, 1023)  # CPU_SETSIZE - 1
# kcross run's own defaults: K fresh harness processes, each with these samples and warm-up
# (chosen from measurement: docs/measuring.md, "A run: processes and samples").  --quick is one process.
DEFAULT_PROCESSES, PROCESSES_RANGE = 10, (1, 100)
PROCESS_SAMPLES, PROCESS_WARMUP_MS = 11, 20
