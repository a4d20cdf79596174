# Namespace model fuzz targets (src/ns): arbitrary traces through the identity scan, the
# replay and the map writer, with the map reader as oracle, then pass B with correction and
# the --check pass over its output; and the map reader alone.
# Seeds: the tests/golden/ns/*.txt fixtures turned into binary traces / their .map files.
add_executable(fuzz-ns ${CMAKE_CURRENT_SOURCE_DIR}/fuzz-ns.c)
target_link_libraries(fuzz-ns PRIVATE tbbt_extract tbbt_ns tbbt_trace)
target_link_options(fuzz-ns PRIVATE -fsanitize=fuzzer)
add_executable(fuzz-ns-map ${CMAKE_CURRENT_SOURCE_DIR}/fuzz-ns-map.c)
target_link_libraries(fuzz-ns-map PRIVATE tbbt_ns tbbt_trace)
target_link_options(fuzz-ns-map PRIVATE -fsanitize=fuzzer)
