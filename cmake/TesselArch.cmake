# tessel_single_ptx(target sources...): compile the given CUDA sources of target once, to the PTX of
# the lowest architecture in CMAKE_CUDA_ARCHITECTURES, and assemble that PTX into a cubin for every
# architecture in the list (nvcc --generate-code=arch=compute_80,code=[compute_80,sm_80,sm_90]);
# the target's other CUDA sources keep one full pass per architecture.
#
# The front end (cicc) is most of a kernel TU's compile time, and it runs once per virtual
# architecture; for a kernel that uses nothing newer than sm_80 the passes differ only in
# __CUDA_ARCH__. Such a TU sees the lowest architecture's __CUDA_ARCH__ on every GPU, so code that
# branches on it (an sm_90 instruction behind TESSEL_ARCH_SM90) must not be compiled this way:
# these TUs are compiled with TESSEL_SINGLE_PTX defined, and the headers with sm_90 paths refuse it.
#
# A list with anything but plain architecture numbers ("native", "all") or with one architecture
# leaves the target as CMake builds it.
function(tessel_single_ptx target)
  set(numbers)
  foreach(arch ${CMAKE_CUDA_ARCHITECTURES})
    if(NOT arch MATCHES "^([0-9]+)(a?)(-real|-virtual)?$")
      return()
    endif()
    list(APPEND numbers ${CMAKE_MATCH_1})
  endforeach()
  list(REMOVE_DUPLICATES numbers)
  list(LENGTH numbers count)
  if(count LESS 2)
    return()
  endif()
  list(SORT numbers COMPARE NATURAL)
  list(GET numbers 0 lowest)
  set(codes compute_${lowest})
  foreach(n ${numbers})
    list(APPEND codes sm_${n})
  endforeach()
  string(JOIN "," codes ${codes})
  set(single "--generate-code=arch=compute_${lowest},code=[${codes}]")
  # What CMake would have passed for CUDA_ARCHITECTURES, for the sources not listed.
  set(each)
  foreach(arch ${CMAKE_CUDA_ARCHITECTURES})
    string(REGEX MATCH "^[0-9]+a?" name ${arch})
    if(arch MATCHES "-real$")
      list(APPEND each "--generate-code=arch=compute_${name},code=[sm_${name}]")
    elseif(arch MATCHES "-virtual$")
      list(APPEND each "--generate-code=arch=compute_${name},code=[compute_${name}]")
    else()
      list(APPEND each "--generate-code=arch=compute_${name},code=[compute_${name},sm_${name}]")
    endif()
  endforeach()
  set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES OFF)
  get_target_property(all ${target} SOURCES)
  list(FILTER all INCLUDE REGEX "\\.cu$")
  foreach(src ${all})
    if(src IN_LIST ARGN)
      set_property(SOURCE ${src} APPEND PROPERTY COMPILE_OPTIONS ${single})
      set_property(SOURCE ${src} APPEND PROPERTY COMPILE_DEFINITIONS TESSEL_SINGLE_PTX)
    else()
      set_property(SOURCE ${src} APPEND PROPERTY COMPILE_OPTIONS ${each})
    endif()
  endforeach()
endfunction()
