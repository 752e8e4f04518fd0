"""``kcross reproduce``: the published experiments kcross started from, measured again.

- :mod:`.experiments`: the one table of published figures (their source, unit and
  conditions) and which of kcross's benchmarks, natively or in which lab boot, gives the
  figure set beside each;
- :mod:`.measure`: runs what the chosen experiments need (a native run as ``kcross run``
  makes it; lab counting boots through kcross.lab.session) and stores it (source
  ``repro``);
- :mod:`.outcome`: turns measurements into each experiment's rows (published, ours,
  ratio) and our own comparisons, judged by kcross.judge;
- :mod:`.job`: ``kcross reproduce``'s job, taking a frozen :class:`~.job.ReproduceRequest`
  (built by kcross.cli.reproduce): refuses what it must before anything runs, measures,
  prints the outcomes;
- kcross.views.reproduce shows them; kcross.report has a section for them.
"""
