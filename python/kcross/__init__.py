"""kcross: measure the cost of crossing between user space and the Linux kernel.

The measuring itself is done by the C program ``kcross-harness``; this package
drives it, validates what it reports, keeps results in a database and renders
them for people.
"""

from __future__ import annotations


def __getattr__(name: str) -> str:
    """``kcross.__version__``, looked up when first used: importlib.metadata costs every
    start of kcross a few tens of milliseconds, which only --version and the report use."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("kcross")
    except PackageNotFoundError:  # running from a source tree via PYTHONPATH
        found = "0+source"
    globals()["__version__"] = found
    return found
