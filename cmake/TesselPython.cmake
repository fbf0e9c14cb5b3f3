# What the Python module (python/) needs: a Python interpreter with its headers, and pybind11.
# Sets TESSEL_PYTHON_DEPS_FOUND, and TESSEL_PYTHON_MISSING (why not) when they are not found.
#
# The interpreter: Python_EXECUTABLE when given (scikit-build-core and scripts/gpu-python.sh give
# it). Otherwise the first of `python3` on PATH and /usr/bin/python3 that can import pytest, since
# ctest runs the Python tests with it (on Debian CI the distribution's python3 has python3-pytest
# while a pyenv python3 earlier on PATH may have none); failing that, the first one found.
# pybind11: its CMake package (Debian's pybind11-dev), else the one `python -m pybind11 --cmakedir`
# names (pip's pybind11).

set(TESSEL_PYTHON_DEPS_FOUND OFF)
set(TESSEL_PYTHON_MISSING "")

if(NOT DEFINED Python_EXECUTABLE AND NOT DEFINED Python_ROOT_DIR)
  find_program(_tessel_path_python3 NAMES python3 NO_CACHE)
  set(_tessel_first "")
  foreach(candidate IN ITEMS "${_tessel_path_python3}" /usr/bin/python3)
    if(NOT candidate OR NOT EXISTS "${candidate}")
      continue()
    endif()
    if(NOT _tessel_first)
      set(_tessel_first "${candidate}")
    endif()
    execute_process(COMMAND "${candidate}" -c "import pytest" RESULT_VARIABLE _tessel_rc OUTPUT_QUIET ERROR_QUIET)
    if(_tessel_rc EQUAL 0)
      set(_tessel_first "${candidate}")
      break()
    endif()
  endforeach()
  if(_tessel_first)
    set(Python_EXECUTABLE "${_tessel_first}" CACHE FILEPATH "The Python tessel's module is built for and tested with")
  endif()
endif()

find_package(Python 3.9 COMPONENTS Interpreter Development.Module QUIET)
if(NOT Python_FOUND)
  set(TESSEL_PYTHON_MISSING "Python >= 3.9 with its headers (python3-dev)")
  return()
endif()

find_package(pybind11 2.10 CONFIG QUIET)
if(NOT pybind11_FOUND)
  execute_process(COMMAND "${Python_EXECUTABLE}" -m pybind11 --cmakedir
                  OUTPUT_VARIABLE _tessel_pybind11_dir RESULT_VARIABLE _tessel_rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_tessel_rc EQUAL 0 AND _tessel_pybind11_dir)
    find_package(pybind11 2.10 CONFIG QUIET HINTS "${_tessel_pybind11_dir}")
  endif()
endif()
if(NOT pybind11_FOUND)
  set(TESSEL_PYTHON_MISSING "pybind11 >= 2.10 (pybind11-dev, or pip's pybind11) for ${Python_EXECUTABLE}")
  return()
endif()
set(TESSEL_PYTHON_DEPS_FOUND ON)
