# cmake/VramkitDeps.cmake — finds the C libraries vramkit builds against: cJSON (the driver),
# Criterion (the tests) and HDF5 (the streamer's files). Two ways:
#  - VRAMKIT_DEPS_PREFIX (-D, or the environment variable of that name): a folder laid out as
#    ci/gpu-deps-fetch.sh makes it (include/, lib/ with each library under its soname): searched
#    alone, with no pkg-config, no h5cc and no system path, so a machine that lacks the
#    development packages (the GPU machine) builds from what was carried. The libraries are
#    linked by full path; CMake's build RPATH then names lib/, and the libraries there find each
#    other through their own RUNPATH ($ORIGIN): nothing needs LD_LIBRARY_PATH.
#  - otherwise the system: pkg-config where it is installed (libcjson, criterion), else
#    find_path/find_library; HDF5 through CMake's FindHDF5.
# Either way the results have the names the build links: the imported targets PkgConfig::CJSON
# and PkgConfig::CRITERION, and HDF5_FOUND, HDF5_C_INCLUDE_DIRS, HDF5_C_LIBRARIES.

set(VRAMKIT_DEPS_PREFIX "$ENV{VRAMKIT_DEPS_PREFIX}" CACHE PATH
    "A prefix with include/ and lib/ (ci/gpu-deps-fetch.sh) that holds cJSON, Criterion and HDF5; empty: the system's")

# An imported shared library from VRAMKIT_DEPS_PREFIX: `header` under include/, the first of
# lib/lib<name>.so, lib/lib<name>.so.* for each name in order. Fatal when either is missing.
function(_vramkit_dep_import target header)
  set(_prefix "${VRAMKIT_DEPS_PREFIX}")
  if(NOT EXISTS "${_prefix}/include/${header}")
    message(FATAL_ERROR "VRAMKIT_DEPS_PREFIX=${_prefix}: no include/${header} (ci/gpu-deps-fetch.sh makes the folder)")
  endif()
  set(_lib "")
  foreach(name ${ARGN})
    file(GLOB _found "${_prefix}/lib/lib${name}.so" "${_prefix}/lib/lib${name}.so.*")
    if(_found)
      list(SORT _found)
      list(GET _found 0 _lib)
      break()
    endif()
  endforeach()
  if(NOT _lib)
    message(FATAL_ERROR "VRAMKIT_DEPS_PREFIX=${_prefix}: none of lib/lib{${ARGN}}.so* (ci/gpu-deps-fetch.sh makes the folder)")
  endif()
  add_library(${target} SHARED IMPORTED)
  set_target_properties(${target} PROPERTIES
    IMPORTED_LOCATION "${_lib}"
    INTERFACE_INCLUDE_DIRECTORIES "${_prefix}/include"
    # the linker resolves the library's own dependencies (libsz, libcurl...) in the same folder
    INTERFACE_LINK_OPTIONS "LINKER:-rpath-link,${_prefix}/lib")
  message(STATUS "vramkit: ${target} from ${_lib}")
endfunction()

# An imported library from the system without pkg-config: its header's folder and the library.
function(_vramkit_dep_system target header lib)
  find_path(_vramkit_${lib}_include ${header})
  find_library(_vramkit_${lib}_library ${lib})
  if(NOT _vramkit_${lib}_include OR NOT _vramkit_${lib}_library)
    message(FATAL_ERROR "${lib}: ${header} or lib${lib} not found (Debian: ci/install-deps.sh; or -DVRAMKIT_DEPS_PREFIX=DIR)")
  endif()
  add_library(${target} UNKNOWN IMPORTED)
  set_target_properties(${target} PROPERTIES IMPORTED_LOCATION "${_vramkit_${lib}_library}"
                                             INTERFACE_INCLUDE_DIRECTORIES "${_vramkit_${lib}_include}")
endfunction()

# PkgConfig::<VAR>: from the prefix, else pkg-config's module, else the system's paths.
function(_vramkit_dep target_var pc_module header)
  if(TARGET PkgConfig::${target_var})
    return()
  endif()
  if(VRAMKIT_DEPS_PREFIX)
    _vramkit_dep_import(PkgConfig::${target_var} ${header} ${ARGN})
    return()
  endif()
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(${target_var} REQUIRED IMPORTED_TARGET ${pc_module})
  else()
    list(GET ARGN 0 _name)
    _vramkit_dep_system(PkgConfig::${target_var} ${header} ${_name})
  endif()
endfunction()

# cJSON: PkgConfig::CJSON.
function(vramkit_find_cjson)
  _vramkit_dep(CJSON libcjson cjson/cJSON.h cjson)
endfunction()

# Criterion: PkgConfig::CRITERION.
function(vramkit_find_criterion)
  _vramkit_dep(CRITERION criterion criterion/criterion.h criterion)
endfunction()

# HDF5 (C): HDF5_FOUND, HDF5_C_INCLUDE_DIRS, HDF5_C_LIBRARIES in the caller's scope. From the
# prefix: the imported target vramkit_deps::hdf5 (Debian's serial build, libhdf5_serial).
macro(vramkit_find_hdf5)
  if(VRAMKIT_DEPS_PREFIX)
    if(NOT TARGET vramkit_deps::hdf5)
      _vramkit_dep_import(vramkit_deps::hdf5 hdf5.h hdf5_serial hdf5)
    endif()
    set(HDF5_FOUND TRUE)
    set(HDF5_C_INCLUDE_DIRS "${VRAMKIT_DEPS_PREFIX}/include")
    set(HDF5_C_LIBRARIES vramkit_deps::hdf5)
  else()
    find_package(HDF5 COMPONENTS C QUIET)
  endif()
endmacro()
