# Test costs for CTest's scheduler (`make test` runs ctest -j2 on a fresh clone, where CTest
# has no Testing/Temporary/CTestCostData.txt yet and would start the tests in the order they
# are declared, so the long poles (test_wear, fio_tools, test_calibration) could start last
# and leave one core idle). CTest starts the tests with the highest COST first.
# Figures: seconds of wall time per test from a fresh-clone `make test` of main at 1dc35be
# (2026-12-02, ctest -j2, machine otherwise idle), test_wear after its three-year cases were
# folded into test_scenario's (the same shipped workload, run once); nbd_controller_fail,
# nbd_ssd_fault and sweep_mpi as measured after they were shortened (539e2b1); only the order
# matters, so they need not be exact. docs/build.md.
set(AFASIM_TEST_COSTS
  test_scenario 40 test_raid_sim 27 test_qos_scenarios 26 test_wear 22
  test_power_sim 16 redfish_clients 16 nbd_clients 13 qos_nbd_max_iops 13 nbd_controller_fail 12
  sweep_mpi 10 nbd_ssd_fault 8 test_controller 12 calibrate_model 11 web_manager 10 test_store 9
  test_reliability 8 test_sweep 7 nbd_sparse 6 test_api 6 html_report 5 session_record_replay 4
  test_redfish 4 nbd_full_pool 4 test_cli 4 fio_tools 4 readme_tour 4 test_scrub 4)

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
