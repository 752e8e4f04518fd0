"""kcross: measure the cost of crossing between user space and the Linux kernel.

The measuring itself is done by the C program ``kcross-harness``; this package
drives it, validates what it reports, keeps results in a database and renders
them for people.
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _dist_version

try:
    __version__ = _dist_version("kcross")
except PackageNotFoundError:  # running from a source tree via PYTHONPATH
    __version__ = "0+source"
