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
# -g0 as well: their line tables were ~15 % of their compile (http/: 113 against 96 CPU-s at
# -O2); a backtrace through them still names the functions.
set(AFASIM_FRONT_END_OPTIMIZATION "-O1;-g0" CACHE STRING "Optimization flags for front-end libraries")
function(afasim_front_end_code target)
  target_compile_options(${target} PRIVATE ${AFASIM_FRONT_END_OPTIMIZATION})
endfunction()

# afasim_test(NAME SOURCES... DEPS ... [IN EXE] [LABELS ...] [TIMEOUT s] [ARGS ...]): a doctest
# test registered with CTest. Labels `torture` and `bench` keep a test out of `make test`.
# Without IN it is its own executable NAME. With IN, its SOURCES go into the shared
# executable EXE (afasim_test_executable) and the CTest test runs only their test cases
# (doctest --source-file): one compile of the heavy headers and one link per folder instead
# of one per test, while CTest still runs the tests side by side (docs/build.md).
# doctest's main() is compiled once for every test executable (it takes ~10 s of a core).
function(afasim_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT;IN" "SOURCES;DEPS;LABELS;ARGS" ${ARGN})
  set(filter "")
  if(ARG_IN)
    set(files "")
    foreach(source ${ARG_SOURCES})
      list(APPEND files "*/${source}")
    endforeach()
    list(JOIN files "," filter)
    set(filter "--source-file=${filter}")
  else()
    set(ARG_IN ${name})
    afasim_test_executable(${name})
  endif()
  target_sources(${ARG_IN} PRIVATE ${ARG_SOURCES})
  target_link_libraries(${ARG_IN} PRIVATE ${ARG_DEPS})
  add_test(NAME ${name} COMMAND ${ARG_IN} ${filter} ${ARG_ARGS})
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

# afasim_test_executable(EXE DEPS ...): a doctest executable that afasim_test(... IN EXE) fills.
# File-scope names of its sources must be unique across them (one unity batch).
function(afasim_test_executable exe)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  if(NOT TARGET afasim_doctest_main)
    add_library(afasim_doctest_main STATIC ${PROJECT_SOURCE_DIR}/tests/doctest_main.cpp)
    target_link_libraries(afasim_doctest_main PUBLIC doctest::doctest)
    afasim_test_code(afasim_doctest_main)
  endif()
  add_executable(${exe})
  afasim_test_code(${exe})
  target_link_libraries(${exe} PRIVATE ${ARG_DEPS} afasim_doctest_main doctest::doctest)
  target_include_directories(${exe} PRIVATE ${PROJECT_SOURCE_DIR})
endfunction()
