# Integration tests: shell scripts run with the build directory as argument.
# 0xx: conversion checked against tshark; they need tshark, and 020 needs root and
# starts the real lab NFS server.  A missing tool or server fails the test.
find_program(BASH bash REQUIRED)
# Every tests/integration/NNN-name.sh is a test, run in name order.
file(GLOB tbbt_itests RELATIVE ${CMAKE_CURRENT_SOURCE_DIR}/integration
     ${CMAKE_CURRENT_SOURCE_DIR}/integration/[0-9][0-9][0-9]-*.sh)
list(SORT tbbt_itests)
foreach(f ${tbbt_itests})
  string(REGEX REPLACE "\\.sh$" "" t ${f})
  add_test(NAME ${t} COMMAND ${BASH} ${CMAKE_CURRENT_SOURCE_DIR}/integration/${t}.sh
           ${CMAKE_BINARY_DIR})
  set_tests_properties(${t} PROPERTIES LABELS integration TIMEOUT 900 RUN_SERIAL TRUE)
endforeach()
# The committed captures, the player against the lab and the trace tools also run
# through the sanitizer build (070 under UBSan found a reply's uninitialized flag).
foreach(t 010-tshark-committed 025-salvage 055-init-nfs 070-play 072-play-faults 073-play-stop
          074-play-server-faults 075-synth 080-raheur 085-stats 095-play-sloppy 097-compare
          100-play-mpi 105-init-mpi 115-nfs4-replay 116-nfs4-roundtrip 117-play-v4)
  set_tests_properties(${t} PROPERTIES LABELS "integration;sanitize")
endforeach()
