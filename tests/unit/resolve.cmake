# Player start-up (src/player/resolve.c: handle look-up; its manifest loader is
# src/ns/manifest-read.c) and --verify (src/player/verify.c).  The look-ups against a
# real server are checked by hand against the lab (see the report of the change); here:
# parsing and the size bookkeeping.
tbbt_unit_test(test-resolve tbbt_play_resolve)
