# libFuzzer target for the capture module's packet decoder.
add_executable(fuzz-capdec fuzz-capdec.c)
target_link_libraries(fuzz-capdec PRIVATE tbbt_capture)
target_link_options(fuzz-capdec PRIVATE -fsanitize=fuzzer)
