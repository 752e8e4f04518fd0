"""Interleaved rounds: sides measured in alternation, so that a machine's drift hits them
alike.

- :mod:`.engine`: the one engine (who goes first alternates, round by round);
- :mod:`.ab`: ``kcross ab``, and the sides (:class:`~.ab.Arm`) every client measures;
- :mod:`.aa`: ``kcross aa``, benchmarks against themselves, to calibrate the verdicts;
- :mod:`.crosscheck`: ``kcross crosscheck``, kcross-harness against ``perf bench``.

(The kernel's own selftests beside kcross's rows, ``kcross lab --peers``, are the lab's:
kcross.lab.peers.)
"""
