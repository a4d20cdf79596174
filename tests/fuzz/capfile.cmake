# libFuzzer target for the capture files' record walker (src/capture/recwalk.c): classic
# pcap, pcapng, gzip, damaged records.  Seeds: tests/fuzz/corpus/capfile/.
add_executable(fuzz-capfile fuzz-capfile.c)
target_link_libraries(fuzz-capfile PRIVATE tbbt_capture PkgConfig::ZLIB PkgConfig::GLIB)
target_link_options(fuzz-capfile PRIVATE -fsanitize=fuzzer)
