# Read-ahead heuristic simulator (src/raheur): hand-worked seqCount sequences of the
# default, SlowDown and cursor heuristics, and the nfsheur table's ejections.
tbbt_unit_test(test-raheur tbbt_raheur)
