# Helpers shared by every folder.
include(${CMAKE_CURRENT_LIST_DIR}/test_costs.cmake)

# afasim_library(NAME SOURCES... DEPS ...): one static library per folder, headers included
# as "folder/file.h" from the repository root.
function(afasim_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()

# Test code (not the libraries it tests) is compiled with AFASIM_TEST_OPTIMIZATION: -Og
# compiles doctest's assertion-heavy test files in about 40 % of -O2's time, and the
# simulations the tests run are the libraries' code, compiled -O2 (docs/build.md has the
# figures). Applies to the test executables, the doctest main and the fuzz corpus replays.
# -g0: doctest reports file:line itself; line tables in test code cost ~12 % of its compile
# time (tests/controller's unity TU: 16.7 against 14.7 CPU-s) and helped no failure report.
set(AFASIM_TEST_OPTIMIZATION "-Og;-g0" CACHE STRING "Optimization flags for test code")
function(afasim_test_code target)
  target_compile_options(${target} PRIVATE ${AFASIM_TEST_OPTIMIZATION})
endfunction()

# Front-end code (not on the simulated I/O path): the ReST, Redfish and HTTP layers, the
# command line, the sweep driver and the config readers are compiled with
# AFASIM_FRONT_END_OPTIMIZATION. At -O1 they build in ~0.66x the CPU of -O2 (a clean build's
# ninja log, 2026-12-02: http/ 118 -> 84 s, app/ 87 -> 63, api/ 68 -> 45, redfish/ 46 -> 28,
# sweep/ 34 -> 24, config/ 23 -> 13); their work is parsing and formatting a request, not the
# simulation, which stays -O2 (-O1 there costs 15 % of test_scenario's CPU). nbd/, serve/ and
# store/ carry NBD's data path and stay -O2. docs/build.md.
set(AFASIM_FRONT_END_OPTIMIZATION "-O1" CACHE STRING "Optimization flags for front-end libraries")
function(afasim_front_end_code target)
  target_compile_options(${target} PRIVATE ${AFASIM_FRONT_END_OPTIMIZATION})
endfunction()

# afasim_test(NAME SOURCES... DEPS ... [LABELS ...] [TIMEOUT s] [ARGS ...]): one doctest executable,
# registered with CTest. Labels `torture` and `bench` keep a test out of `make test`.
# doctest's main() is compiled once for every test executable (it takes ~10 s of a core).
function(afasim_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPS;LABELS;ARGS" ${ARGN})
  if(NOT TARGET afasim_doctest_main)
    add_library(afasim_doctest_main STATIC ${PROJECT_SOURCE_DIR}/tests/doctest_main.cpp)
    target_link_libraries(afasim_doctest_main PUBLIC doctest::doctest)
    afasim_test_code(afasim_doctest_main)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  afasim_test_code(${name})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} afasim_doctest_main doctest::doctest)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  add_test(NAME ${name} COMMAND ${name} ${ARG_ARGS})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT}
    ENVIRONMENT "AFASIM_SOURCE_DIR=${PROJECT_SOURCE_DIR};AFASIM_BINARY=${PROJECT_BINARY_DIR}/app/afasim")
  if(ARG_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}")
  endif()
  get_directory_property(costs_scheduled AFASIM_TEST_COSTS_SCHEDULED)
  if(NOT costs_scheduled)
    set_directory_properties(PROPERTIES AFASIM_TEST_COSTS_SCHEDULED ON)
    cmake_language(DEFER CALL afasim_apply_test_costs)
  endif()
endfunction()
