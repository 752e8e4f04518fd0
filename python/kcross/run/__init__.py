"""Running the harness and keeping what it measures (``kcross run``, and every command
that runs it natively):

- :mod:`.harness`: finding and driving the ``kcross-harness`` program (its records as they
  arrive, its exit in kcross's terms, the stop signals);
- :mod:`.runner`: ``kcross run``'s controller (:class:`~.runner.RunRequest`): each result
  stored as it arrives, the run always closed, the table;
- :mod:`.processes`: a run of several harness processes, combined into one stream;
- :mod:`.progress`: the live progress display;
- :mod:`.readiness`: is this machine ready to measure on (``kcross sysinfo --readiness``, the
  warning of a run);
- :mod:`.remote`: ``kcross run --remote``, the harness over ssh;
- :mod:`.defaults`: what a run measures when not told otherwise (light: every parser
  quotes it).

Light on purpose: the command line imports :mod:`.defaults` on every start.
"""
