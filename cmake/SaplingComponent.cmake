# An optional component of the package (sapling::bullet, sapling::mpi):
# its library, headers and exported targets, installed beside the core's so
# that find_package(sapling COMPONENTS <name>) finds them
# (saplingConfig.cmake.in).
#   sapling_install_component(<target> <export set>)
include(GNUInstallDirs)
function(sapling_install_component target export_set)
  install(TARGETS ${target} EXPORT ${export_set}
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/sapling DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT ${export_set} NAMESPACE sapling:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sapling)
endfunction()
