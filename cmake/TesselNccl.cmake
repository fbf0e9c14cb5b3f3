# NCCL for tessel::dist: nccl.h and libnccl, version 2.28 or newer (zero-CTA collectives on
# symmetric windows). Both from TESSEL_NCCL_ROOT when it is set (e.g. the nvidia/nccl directory of
# pip's nvidia-nccl-cu13, which has lib/libnccl.so.2 but no libnccl.so); else beside the CUDA
# toolkit, then in the system's paths. Sets TESSEL_NCCL_FOUND and the imported target TESSEL::nccl;
# says why when it is not built.
set(TESSEL_NCCL_ROOT "" CACHE PATH "A prefix with include/nccl.h and lib/libnccl.so* (tessel::dist)")
set(TESSEL_NCCL_FOUND OFF)
if(TESSEL_NCCL_ROOT)
  # Header and library both from the given prefix: a header of one NCCL release with the library
  # of another (the system's libnccl.so beside pip's header) is a silent ABI mismatch.
  find_path(TESSEL_NCCL_INCLUDE_DIR nccl.h PATHS ${TESSEL_NCCL_ROOT}/include NO_DEFAULT_PATH)
  find_library(TESSEL_NCCL_LIBRARY NAMES nccl libnccl.so.2 NAMES_PER_DIR
    PATHS ${TESSEL_NCCL_ROOT}/lib ${TESSEL_NCCL_ROOT}/lib64 NO_DEFAULT_PATH)
else()
  find_path(TESSEL_NCCL_INCLUDE_DIR nccl.h
    HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT}/include)
  find_library(TESSEL_NCCL_LIBRARY NAMES nccl libnccl.so.2 NAMES_PER_DIR
    HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib64)
endif()
if(NOT TESSEL_NCCL_INCLUDE_DIR OR NOT TESSEL_NCCL_LIBRARY)
  message(STATUS "tessel::dist: not built: NCCL not found (nccl.h: ${TESSEL_NCCL_INCLUDE_DIR}, "
                 "libnccl: ${TESSEL_NCCL_LIBRARY}); set TESSEL_NCCL_ROOT to a prefix that has them")
  return()
endif()
file(STRINGS ${TESSEL_NCCL_INCLUDE_DIR}/nccl.h _tessel_nccl_version REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) +[0-9]+")
string(REGEX REPLACE ".*NCCL_MAJOR +([0-9]+).*" "\\1" _tessel_nccl_major "${_tessel_nccl_version}")
string(REGEX REPLACE ".*NCCL_MINOR +([0-9]+).*" "\\1" _tessel_nccl_minor "${_tessel_nccl_version}")
string(REGEX REPLACE ".*NCCL_PATCH +([0-9]+).*" "\\1" _tessel_nccl_patch "${_tessel_nccl_version}")
set(TESSEL_NCCL_VERSION "${_tessel_nccl_major}.${_tessel_nccl_minor}.${_tessel_nccl_patch}")
if(TESSEL_NCCL_VERSION VERSION_LESS 2.28)
  message(STATUS "tessel::dist: not built: NCCL ${TESSEL_NCCL_VERSION} at ${TESSEL_NCCL_INCLUDE_DIR} is older than 2.28 "
                 "(no zero-CTA collectives); set TESSEL_NCCL_ROOT to a newer one")
  return()
endif()
if(NOT TARGET TESSEL::nccl)
  add_library(TESSEL::nccl SHARED IMPORTED GLOBAL)
  set_target_properties(TESSEL::nccl PROPERTIES IMPORTED_LOCATION ${TESSEL_NCCL_LIBRARY}
                        INTERFACE_INCLUDE_DIRECTORIES ${TESSEL_NCCL_INCLUDE_DIR})
endif()
set(TESSEL_NCCL_FOUND ON)
message(STATUS "tessel::dist: NCCL ${TESSEL_NCCL_VERSION} (${TESSEL_NCCL_LIBRARY})")
