# Compile SRC with CXX; pass when compilation fails and the output contains the text from the
# file's "// EXPECT-ERROR: <text>" line.
file(STRINGS ${SRC} expect_line REGEX "^// EXPECT-ERROR: ")
if(NOT expect_line)
  message(FATAL_ERROR "${SRC} has no '// EXPECT-ERROR: <text>' line")
endif()
string(REGEX REPLACE "^// EXPECT-ERROR: " "" expected "${expect_line}")
execute_process(COMMAND ${CXX} -std=c++20 -fsyntax-only -I${INCLUDE} ${SRC}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "${SRC} compiled, but it must be refused with: ${expected}")
endif()
string(FIND "${out}${err}" "${expected}" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "${SRC} failed to compile, but not with the expected message\n  expected: ${expected}\n  got:\n${err}")
endif()
message(STATUS "refused as expected: ${expected}")
