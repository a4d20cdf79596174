# fuzz-rpc: RPC headers (onc module, through extract/rpc.h) and NFS/MOUNT argument/result
# decoding (extract module).
add_executable(fuzz-rpc ${CMAKE_CURRENT_SOURCE_DIR}/fuzz-rpc.c)
target_link_libraries(fuzz-rpc PRIVATE tbbt_extract)
target_link_options(fuzz-rpc PRIVATE -fsanitize=fuzzer)
