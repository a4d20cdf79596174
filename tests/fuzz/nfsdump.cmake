# fuzz-nfsdump: the nfsdump text-trace reader of tbbt-convert (src/extract/source-nfsdump.c).
# Seeds: tests/fuzz/corpus/nfsdump/ and tests/golden/nfsdump/*.txt.
add_executable(fuzz-nfsdump ${CMAKE_CURRENT_SOURCE_DIR}/fuzz-nfsdump.c)
target_link_libraries(fuzz-nfsdump PRIVATE tbbt_extract)
target_link_options(fuzz-nfsdump PRIVATE -fsanitize=fuzzer)
