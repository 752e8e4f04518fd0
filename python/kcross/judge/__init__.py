"""The judgement core: does B differ from A, and is it the same machine?

Every command and view that compares (compare, check, history, report, ab/aa, the
labs' tables) asks this package; none decides on its own (a test checks that no other
module calls the comparison statistics of kcross.stats or words a verdict).

- :mod:`.machine`: the one "same machine / what differs" rule;
- :mod:`.pairing`: which benchmark of which side is compared with which, and the one
  refusal of sides in different units;
- :mod:`.verdict`: the verdict of a pair (exact, levels, samples), a pair's gate at a
  tolerance, the words, the geomean, the minimum detectable change;
- :mod:`.categories`: the categories and their words, defined once;
- :mod:`.noise`: a machine's run-to-run noise, from its stored runs or a calibration;
- :mod:`.comparison`: a whole comparison of sides, the object the views read: the only
  entry that pairs and judges sides (every comparing command calls it);
- :mod:`.gate`: ``kcross check``'s rule over a comparison: the tolerance, what fails,
  the missing benchmarks' policy.
"""
