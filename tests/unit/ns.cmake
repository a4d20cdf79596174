# Namespace model and hierarchy extraction (src/ns, src/extract/hier.c).  Fixtures are text
# traces in tests/golden/ns/; hier.c belongs to tbbt_extract but is compiled in here so the
# tests do not depend on the rest of tbbt-convert.
tbbt_unit_test(test-ns tbbt_ns tbbt_trace)
target_sources(test-ns PRIVATE ${CMAKE_SOURCE_DIR}/src/extract/hier.c)
target_compile_definitions(test-ns PRIVATE
  TBBT_NS_GOLDEN_DIR="${CMAKE_CURRENT_SOURCE_DIR}/golden/ns")
