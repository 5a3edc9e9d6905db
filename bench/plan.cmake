# Memory placement benchmark (include(${CMAKE_CURRENT_LIST_DIR}/plan.cmake)
# from bench/CMakeLists.txt): exir-plan-bench prints, per generated program and
# algorithm, total bytes, lower bound, ratio and time. Run bench/plan_bench.sh.
add_executable(exir-plan-bench ${CMAKE_CURRENT_LIST_DIR}/plan_bench.cpp)
target_link_libraries(exir-plan-bench PRIVATE ExirPlan)
set_target_properties(exir-plan-bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
