# Pre-play correction (src/extract/correct.c): one test per rule of its table, and the
# --check pass over the corrected trace.  Fixtures are text traces in tests/golden/correct/.
tbbt_unit_test(test-correct tbbt_extract tbbt_ns tbbt_trace)
target_compile_definitions(test-correct PRIVATE
  TBBT_CORR_GOLDEN_DIR="${CMAKE_CURRENT_SOURCE_DIR}/golden/correct")
# The NFSv4 lost-state correction (src/extract/correct4.c): corrective OPENs by handle.
tbbt_unit_test(test-correct4 tbbt_extract tbbt_trace)
