# FS-dependency order (src/sched/fsdep.c): Table 4's object sets, the locks, and the
# READDIR(PLUS) paging positions.
tbbt_unit_test(test-fsdep tbbt_sched)
