# Trace module fuzz targets: the binary reader (with a dump/from-text round-trip oracle)
# and the text-form parser.  Seeds: tests/golden/basic.txt and traces made from it.
foreach(t fuzz-trace fuzz-trace-text)
  add_executable(${t} ${CMAKE_CURRENT_SOURCE_DIR}/${t}.c)
  target_link_libraries(${t} PRIVATE tbbt_trace)
  target_link_options(${t} PRIVATE -fsanitize=fuzzer)
endforeach()
