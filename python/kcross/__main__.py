"""``python -m kcross``: the same as the ``kcross`` command."""

from .cli import main

main()
