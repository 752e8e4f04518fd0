"""A Lava-Test-Shell definition for boards that boot a full root filesystem (issue 17).

``kcross lava job ARCH --test-shell -o DIR`` writes ``DIR/kcross-test-shell.yaml`` and the
static harness ``DIR/kcross-harness-ARCH``.  The definition's steps (POSIX sh, run by
LAVA's test shell on the board, in the definition's directory):

1. the harness: ``./kcross-harness`` if the test's repository or overlay put it there,
   else downloaded from the ``HARNESS_URL`` parameter (curl or wget);
2. ``kcross-harness run --json --result-lines ns/op`` with the ``SUITES`` and ``BENCH``
   parameters and the settings of ``SETTINGS`` (``kcross lava job --env``: NAME=VALUE
   words) in its environment, its output (standard error too) then copied to the console, so that
   the job's log holds the harness's JSON records;
3. one ``lava-test-case`` per result line: ``NAME --result pass --measurement X --units
   ns/op``, ``--result skip``, ``--result fail``, or ``--result unknown`` (a result with no
   figure), NAME being the case name a monitor would give (:func:`kcross.lava.job.case_id`);
4. the harness's exit status as the step's (0: all ok or skipped; 1: a check failed).

On a board the harness measures time (ns/op), not instructions: the figures are a real
machine's.  Untested on a board here; the steps are tested with a fake ``lava-test-case``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

NAME = "kcross"
HARNESS = "./kcross-harness"

# The steps, one shell script (LAVA writes each step into the test's run script as it is).
STEPS = r"""set -u
if [ ! -x ./kcross-harness ]; then
  [ -n "${HARNESS_URL:-}" ] || { echo "kcross: no ./kcross-harness and no HARNESS_URL"; exit 2; }
  curl -fsSL -o ./kcross-harness "$HARNESS_URL" || wget -q -O ./kcross-harness "$HARNESS_URL" \
    || { echo "kcross: cannot download $HARNESS_URL"; exit 2; }
  chmod +x ./kcross-harness
fi
set -- run --json --result-lines ns/op
[ -z "${SUITES:-}" ] || set -- "$@" --suite "$SUITES"
[ -z "${BENCH:-}" ] || set -- "$@" --bench "$BENCH"
status=0
set -f
env ${SETTINGS:-} ./kcross-harness "$@" > kcross-harness.out 2>&1 || status=$?
set +f
cat kcross-harness.out
while IFS= read -r line; do
  case "$line" in
    "kcross-result: "*)
      set -f; set -- $line; set +f
      name=$(printf '%s' "$2" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9_][^a-z0-9_]*/_/g')
      if [ $# -ge 5 ]; then
        lava-test-case "$name" --result "$3" --measurement "$4" --units "$5"
      else
        lava-test-case "$name" --result "$3"
      fi;;
  esac
done < kcross-harness.out
exit "$status"
"""


def definition(*, harness_url: str, suites: str, bench: str | None,
               env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The test definition (Lava-Test Test Definition 1.0)."""
    return {
        "metadata": {
            "format": "Lava-Test Test Definition 1.0",
            "name": NAME,
            "description": "kcross-harness: the cost of user/kernel crossings, one test "
                           "case per benchmark (ns/op); the log holds the harness's JSON "
                           "records (docs/lava.md)",
            "maintainer": [],
            "os": ["debian", "ubuntu", "fedora", "oe"],
            "scope": ["performance"],
            "devices": [],
        },
        "params": {"HARNESS_URL": harness_url, "SUITES": suites, "BENCH": bench or "",
                   **({"SETTINGS": " ".join(f"{k}={v}" for k, v in env.items())}
                      if env else {})},
        "run": {"steps": [STEPS]},
    }
