# fuzz-manifest: tbbt-play's manifest reader (src/ns/manifest-read.c, linked through
# tbbt_play_resolve).
add_executable(fuzz-manifest ${CMAKE_CURRENT_SOURCE_DIR}/fuzz-manifest.c)
target_link_libraries(fuzz-manifest PRIVATE tbbt_play_resolve)
target_link_options(fuzz-manifest PRIVATE -fsanitize=fuzzer)
