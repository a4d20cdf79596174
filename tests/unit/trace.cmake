# Trace module unit tests (src/trace); the golden text fixture lives in tests/golden/, inputs
# that once broke the reader in tests/regress/trace-*.tbbt.
tbbt_unit_test(test-trace tbbt_trace)
target_compile_definitions(test-trace PRIVATE
  TBBT_GOLDEN_DIR="${CMAKE_CURRENT_SOURCE_DIR}/golden"
  TBBT_REGRESS_DIR="${CMAKE_CURRENT_SOURCE_DIR}/regress")
target_link_libraries(test-trace PRIVATE PkgConfig::ZLIB)
