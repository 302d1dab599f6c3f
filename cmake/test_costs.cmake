# Test costs for CTest's scheduler (`make test` runs ctest -j2 on a fresh clone, where CTest
# has no Testing/Temporary/CTestCostData.txt yet and would start the tests in the order they
# are declared, so the long poles (test_wear, fio_tools, test_calibration) could start last
# and leave one core idle). CTest starts the tests with the highest COST first.
# Figures: seconds of wall time per test from a `make test` run of main at 37d6b25 (its
# CTestCostData.txt); only the order matters, so they need not be exact. docs/build.md.
set(AFASIM_TEST_COSTS
  test_wear 74 fio_tools 54 test_calibration 45 test_power_sim 43 test_raid_sim 41
  web_manager 37 nbd_controller_fail 27 html_report 22 nbd_clients 16 nbd_ssd_fault 16
  test_controller 13 qos_nbd_max_iops 13 test_scenario 10 calibrate_model 10 test_cli 8 test_qos_scenarios 8
  readme_tour 8 test_store 7)

# afasim_apply_test_costs(): sets COST on the tests of the table declared in the current
# directory (set_tests_properties reaches only those in CMake 3.25). afasim_test schedules it
# once per directory, at the directory's end, so tests added after it by add_test get theirs.
function(afasim_apply_test_costs)
  set(costs ${AFASIM_TEST_COSTS})
  while(costs)
    list(POP_FRONT costs test_name test_cost)
    if(TEST ${test_name})
      set_tests_properties(${test_name} PROPERTIES COST ${test_cost})
    endif()
  endwhile()
endfunction()
