# docs/trace-format.md and docs/scenarios.md are copies of the project's
# contract, kept in shared/spec/ beside the repository. Run as
#   cmake -DSOURCE_DIR=<repository root> -P spec_copies_test.cmake
# Fails if a docs/ copy is missing or differs by one byte from the spec beside
# the repository; skipped (exit 0, "skipped" in the output) when there is no
# ../shared/spec, as in a clone on its own.
foreach(file trace-format.md scenarios.md)
  set(copy "${SOURCE_DIR}/docs/${file}")
  get_filename_component(spec "${SOURCE_DIR}/../shared/spec/${file}" ABSOLUTE)
  if(NOT EXISTS "${copy}")
    message(FATAL_ERROR "docs/${file} is missing")
  endif()
  if(NOT EXISTS "${spec}")
    message(STATUS "spec copies: skipped docs/${file}: no ${spec}")
    continue()
  endif()
  execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${copy}" "${spec}" RESULT_VARIABLE differ)
  if(differ)
    message(FATAL_ERROR "docs/${file} differs from ${spec}: copy the spec again (cp ${spec} ${copy})")
  endif()
  message(STATUS "spec copies: docs/${file} ok")
endforeach()
