# fuzz-nfs4: tbbt-convert's NFSv4 COMPOUND/CB_COMPOUND walk and its counting (extract module).
add_executable(fuzz-nfs4 ${CMAKE_CURRENT_SOURCE_DIR}/fuzz-nfs4.c)
target_link_libraries(fuzz-nfs4 PRIVATE tbbt_extract)
target_link_options(fuzz-nfs4 PRIVATE -fsanitize=fuzzer)
