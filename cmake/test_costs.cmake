# Test costs for CTest's scheduler (`make test` runs ctest -j2 on a fresh clone, where CTest
# has no Testing/Temporary/CTestCostData.txt yet and would start the tests in the order they
# are declared, so the long poles (test_wear, fio_tools, test_calibration) could start last
# and leave one core idle). CTest starts the tests with the highest COST first.
# Figures: seconds of wall time per test from a fresh-clone `make test` of main at f3dbf67
# (its CTestCostData.txt; load 4-5, so about twice idle); only the order matters, so they
# need not be exact. docs/build.md. test_sweep: 12.8 s wall measured alone on the sweep branch;
# sweep_mpi: 16.6 and 18.5 s alone on the mpi branch (load 2-3.5 from other work).
set(AFASIM_TEST_COSTS
  test_wear 99 test_power_sim 88 test_raid_sim 55 test_scenario 52 test_calibration 49
  nbd_clients 39 test_controller 37 nbd_controller_fail 30 web_manager 26 test_store 20
  readme_tour 20 redfish_clients 20 nbd_ssd_fault 18 fio_tools 16 test_qos_scenarios 16 qos_nbd_max_iops 15
  sweep_mpi 17 test_scrub 14 test_sweep 13 html_report 11 test_cli 11 calibrate_model 10 session_record_replay 10 nbd_sparse 9)

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
