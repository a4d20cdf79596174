# Profile-guided optimization of tbbt-convert (GCC; TBBT_PGO, on by default for
# optimized builds).  Included by the top-level CMakeLists.txt.
#
# The build makes an instrumented copy of tbbt-convert in <build>/pgo-instrumented
# (this same source tree, configured with TBBT_PGO_GENERATE), converts the captures
# committed under traces/ with it (cmake/pgo-train.cmake), and compiles tbbt-convert's
# libraries with the profile it wrote to <build>/pgo-profile.  The profile only
# steers optimization (code layout, inlining, branch order, unrolling): the output
# of the tools is the same.  Both trees
# name their profile files relative to their own build directory
# (-fprofile-prefix-path), so each object finds its counterpart's counts.  Code the
# captures never ran is optimized as without a profile (-fprofile-partial-training).
# rpcgen's sources lie in each tree's own generated/ directory: GCC notes that their
# functions "moved" (-Wcoverage-mismatch, an error by default) and still uses their
# counts, which match; a function whose code differs from its counts gets none.
# About 10 % of tbbt-convert's time on the benchmark (bench/convert-bench.sh).

option(TBBT_PGO "Profile-guided optimization of tbbt-convert (GCC, optimized builds)" ON)
set(TBBT_PGO_GENERATE "" CACHE PATH
    "Internal: build instrumented for profile-guided optimization, writing the profile here")

set(tbbt_pgo_use_flags "")
if(TBBT_PGO_GENERATE)
  add_compile_options(-fprofile-generate -fprofile-update=prefer-atomic
                      -fprofile-dir=${TBBT_PGO_GENERATE}
                      -fprofile-prefix-path=${CMAKE_BINARY_DIR})
  add_link_options(-fprofile-generate)
elseif(TBBT_PGO AND CMAKE_C_COMPILER_ID STREQUAL "GNU" AND NOT TBBT_SANITIZE
       AND NOT TBBT_FUZZ AND NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
  include(CheckCCompilerFlag)
  check_c_compiler_flag("-fprofile-prefix-path=${CMAKE_BINARY_DIR}" tbbt_pgo_prefix_ok)
  if(tbbt_pgo_prefix_ok)
    include(ExternalProject)
    if(CMAKE_GENERATOR MATCHES "Makefiles")
      set(tbbt_pgo_make $(MAKE) tbbt-convert)        # make's job server reaches the sub-build
    else()
      cmake_host_system_information(RESULT tbbt_pgo_jobs QUERY NUMBER_OF_LOGICAL_CORES)
      set(tbbt_pgo_make ${CMAKE_COMMAND} --build <BINARY_DIR> --target tbbt-convert
          --parallel ${tbbt_pgo_jobs})
    endif()
    set(tbbt_pgo_dir ${CMAKE_BINARY_DIR}/pgo-profile)
    set(tbbt_pgo_tree ${CMAKE_BINARY_DIR}/pgo-instrumented)
    ExternalProject_Add(tbbt_pgo_instrumented
      SOURCE_DIR ${CMAKE_SOURCE_DIR}
      BINARY_DIR ${tbbt_pgo_tree}
      CMAKE_ARGS -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE} -DCMAKE_C_COMPILER=${CMAKE_C_COMPILER}
                 -DTBBT_BUILD_TESTS=OFF -DTBBT_PGO=OFF -DTBBT_LTO=${TBBT_LTO}
                 -DTBBT_PGO_GENERATE=${tbbt_pgo_dir}
      BUILD_COMMAND ${tbbt_pgo_make}
      INSTALL_COMMAND ""
      BUILD_ALWAYS ON
      BUILD_BYPRODUCTS ${tbbt_pgo_tree}/src/extract/tbbt-convert)
    file(GLOB tbbt_pgo_traces CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/traces/*.pcap
         ${CMAKE_SOURCE_DIR}/traces/*.pcapng)
    add_custom_command(OUTPUT ${tbbt_pgo_dir}/trained
      COMMAND ${CMAKE_COMMAND} -DCONVERT=${tbbt_pgo_tree}/src/extract/tbbt-convert
              -DPROFILE=${tbbt_pgo_dir} -DWORK=${tbbt_pgo_tree}/training
              "-DTRACES=${tbbt_pgo_traces}" -P ${CMAKE_SOURCE_DIR}/cmake/pgo-train.cmake
      DEPENDS tbbt_pgo_instrumented ${tbbt_pgo_tree}/src/extract/tbbt-convert
              ${CMAKE_SOURCE_DIR}/cmake/pgo-train.cmake ${tbbt_pgo_traces}
      COMMENT "Training tbbt-convert's profile on traces/"
      VERBATIM)
    add_custom_target(tbbt_pgo_profile DEPENDS ${tbbt_pgo_dir}/trained)
    set(tbbt_pgo_use_flags -fprofile-use -fprofile-dir=${tbbt_pgo_dir}
        -fprofile-prefix-path=${CMAKE_BINARY_DIR} -fprofile-partial-training
        -Wno-missing-profile -Wno-coverage-mismatch)
  else()
    message(STATUS "tbbt: no profile-guided optimization (no -fprofile-prefix-path)")
  endif()
endif()

# tbbt_pgo_use(TARGET...): compile the targets with the trained profile, after it is made.
function(tbbt_pgo_use)
  if(NOT tbbt_pgo_use_flags)
    return()
  endif()
  foreach(t ${ARGN})
    target_compile_options(${t} PRIVATE ${tbbt_pgo_use_flags})
    target_link_options(${t} PRIVATE ${tbbt_pgo_use_flags})
    add_dependencies(${t} tbbt_pgo_profile)
    # a new profile recompiles the target's sources
    get_target_property(srcs ${t} SOURCES)
    get_target_property(dir ${t} SOURCE_DIR)
    list(TRANSFORM srcs PREPEND "${dir}/" REGEX "^[^/]")
    set_source_files_properties(${srcs} TARGET_DIRECTORY ${t}
      PROPERTIES OBJECT_DEPENDS ${tbbt_pgo_dir}/trained)
  endforeach()
endfunction()
