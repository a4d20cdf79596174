# Training run of profile-guided optimization (cmake/pgo.cmake): converts each
# capture in TRACES with the instrumented tbbt-convert (CONVERT), on one thread and
# on two, so that its counts land in PROFILE; WORK holds the outputs.  Earlier
# counts are removed first: they may belong to an older version of the code.
#   cmake -DCONVERT=... -DPROFILE=... -DWORK=... -DTRACES=a;b -P pgo-train.cmake
file(GLOB old "${PROFILE}/*.gcda")
if(old)
  file(REMOVE ${old})
endif()
file(MAKE_DIRECTORY "${PROFILE}" "${WORK}")
foreach(t ${TRACES})
  foreach(threads 1 2)
    execute_process(COMMAND "${CONVERT}" --threads ${threads} -q -o "${WORK}/t.tbbt"
                            --summary-json "${WORK}/t.json" "${t}"
                    RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "pgo-train: tbbt-convert failed (${rc}) on ${t}")
    endif()
  endforeach()
endforeach()
file(REMOVE_RECURSE "${WORK}")
file(TOUCH "${PROFILE}/trained")
