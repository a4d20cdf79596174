# The replay scheduler (src/sched/sched.c): lookahead window, conservative and fsdep
# order (TBBT paper Table 3 and Figure 6), clones, client and overall limits, due times;
# no threads, no server.  Labelled unit, so CI runs it plain and under ASan/UBSan.
tbbt_unit_test(test-sched tbbt_sched)
