# Finds Bullet for sapling::bullet (adapters/bullet/) and defines the imported
# target SaplingBullet::Bullet, with SAPLING_BULLET_FOUND and
# SAPLING_BULLET_VERSION. Used by the build and, installed beside
# saplingConfig.cmake, by find_package(sapling COMPONENTS bullet).
#
# pkg-config's module SAPLING_BULLET_PKG first ("bullet"; Debian's
# "bullet-float64" is Bullet with a double btScalar), else CMake's FindBullet.
if(TARGET SaplingBullet::Bullet)
  set(SAPLING_BULLET_FOUND TRUE)
  return()
endif()
set(SAPLING_BULLET_FOUND FALSE)
if(NOT SAPLING_BULLET_PKG)
  set(SAPLING_BULLET_PKG bullet)
endif()
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(SAPLING_BULLET_PC QUIET IMPORTED_TARGET GLOBAL ${SAPLING_BULLET_PKG})
  if(SAPLING_BULLET_PC_FOUND)
    add_library(SaplingBullet::Bullet INTERFACE IMPORTED GLOBAL)
    target_link_libraries(SaplingBullet::Bullet INTERFACE PkgConfig::SAPLING_BULLET_PC)
    set(SAPLING_BULLET_FOUND TRUE)
    set(SAPLING_BULLET_VERSION "${SAPLING_BULLET_PC_VERSION}")
  endif()
endif()
if(NOT SAPLING_BULLET_FOUND)
  find_package(Bullet QUIET MODULE)
  if(BULLET_FOUND)
    add_library(SaplingBullet::Bullet INTERFACE IMPORTED GLOBAL)
    target_include_directories(SaplingBullet::Bullet INTERFACE ${BULLET_INCLUDE_DIRS})
    target_link_libraries(SaplingBullet::Bullet INTERFACE ${BULLET_LIBRARIES})
    set(SAPLING_BULLET_FOUND TRUE)
    set(SAPLING_BULLET_VERSION "unknown")
  endif()
endif()
