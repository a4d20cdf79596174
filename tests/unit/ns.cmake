# Namespace model, hierarchy extraction and pre-play correction (src/ns,
# src/extract/hier.c, src/extract/correct.c).  Fixtures are text traces in tests/golden/ns/.
tbbt_unit_test(test-ns tbbt_extract tbbt_ns tbbt_trace)
target_compile_definitions(test-ns PRIVATE
  TBBT_NS_GOLDEN_DIR="${CMAKE_CURRENT_SOURCE_DIR}/golden/ns")
