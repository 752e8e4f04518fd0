"""What a person reads: every view of kcross's result objects, in one vocabulary
(:mod:`.text`: how each figure, interval, sign and word is written) and one table model
(:mod:`.table`: a table written for a terminal, a CI log or Markdown).  A run (:mod:`.run`),
a fingerprint (:mod:`.fingerprint`), the stored runs and benchmarks (:mod:`.runs`), a
comparison, a check, a trend, benchstat's and ministat's layouts, the interleaved rounds,
the lab's tables, its peers and profiles, readiness, the published experiments; the
verdict in words (:mod:`.verdict`).  Siblings of the exports (kcross.export: files other
tools read, the Markdown one in this vocabulary) and the HTML report (kcross.report, whose
text uses it too); they compute nothing: every figure and verdict comes from kcross.judge
and the features."""
