"""kcross on LAVA board farms (issue 17): job definitions (:mod:`.job`, ``kcross lava job``),
LAVA's logs and results exports read back (:mod:`.log`, :mod:`.results`) and imported as
runs (:mod:`.imports`, ``kcross import``), and a Lava-Test-Shell definition for boards
that boot a full root filesystem (:mod:`.testshell`).  docs/lava.md says what is tested.
"""
