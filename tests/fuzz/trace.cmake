# Trace module fuzz targets: the binary reader (with a dump/from-text round-trip oracle)
# and the text-form parser.  Seeds: tests/fuzz/corpus/trace/ (binary: basic.tbbt from
# tests/golden/basic.txt, the same fixture as a 1.0 file, and the credential texts of
# corpus/trace-text/ through `tbbt-dump --from-text`) and tests/fuzz/corpus/trace-text/.
foreach(t fuzz-trace fuzz-trace-text)
  add_executable(${t} ${CMAKE_CURRENT_SOURCE_DIR}/${t}.c)
  target_link_libraries(${t} PRIVATE tbbt_trace)
  target_link_options(${t} PRIVATE -fsanitize=fuzzer)
endforeach()
