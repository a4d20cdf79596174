# Unit tests of tbbt-convert's nfsdump text-trace reader (src/extract/source-nfsdump.c); its
# fixtures and their expected dumps live in tests/golden/nfsdump/ (regen.sh rewrites the dumps).
tbbt_unit_test(test-nfsdump tbbt_extract)
target_compile_definitions(test-nfsdump PRIVATE
  TBBT_ND_DIR="${CMAKE_CURRENT_SOURCE_DIR}/golden/nfsdump")
