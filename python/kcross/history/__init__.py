"""``kcross history``: one benchmark's trend over the stored runs.

- :mod:`.trend`: the trend (each stored run holding the benchmark a point, each point's
  change against the previous point of its host, judged by kcross.judge; the machines'
  run-to-run noise), and how benchmark names match a pattern (also ab's and aa's);
- its queries are the store's, named for it (kcross.store.history); its table, JSON and
  plot are kcross.views.history's.
"""
