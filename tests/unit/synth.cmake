# The read-benchmark generator (src/synth): stride order, file set, round-robin clock,
# per-reader reordering, and the written trace + map.
tbbt_unit_test(test-synth tbbt_synth tbbt_extract tbbt_ns tbbt_trace)
