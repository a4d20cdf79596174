# Integration tests: shell scripts run with the build directory as argument.
# 0xx: conversion checked against tshark; they need tshark, and 020 needs root and
# starts the real lab NFS server.  A missing tool or server fails the test.
find_program(BASH bash REQUIRED)
foreach(t 010-tshark-committed 020-lab-captures 030-correction 040-measure 050-init 060-rpcconn
          065-rpc-proxy 070-play)
  add_test(NAME ${t} COMMAND ${BASH} ${CMAKE_CURRENT_SOURCE_DIR}/integration/${t}.sh
           ${CMAKE_BINARY_DIR})
  set_tests_properties(${t} PROPERTIES LABELS integration TIMEOUT 900 RUN_SERIAL TRUE)
endforeach()
# The committed captures also run through the sanitizer build.
set_tests_properties(010-tshark-committed PROPERTIES LABELS "integration;sanitize")
