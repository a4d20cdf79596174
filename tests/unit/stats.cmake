# tbbt-stats analyses (src/stats/): op mix, sequential runs, temperature and hottest-set
# overlap, sharing, the concurrency simulator (TBBT paper Table 3) and the latency
# options, on small in-memory record streams with hand-worked numbers.
if(TARGET tbbt_stats)
  tbbt_unit_test(test-stats tbbt_stats)
endif()
