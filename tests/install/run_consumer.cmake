# cmake -P driver of the ctests install_consumer and subdirectory_consumer (CMakeLists.txt here).
#
#   MODE=install  install BUILD_DIR (as built: nothing is rebuilt) into WORK/staged, move it to
#                 WORK/prefix (an installed tree works wherever it is moved), check its layout,
#                 then configure, build and run consumer/ against it with find_package alone.
#   MODE=subdir   configure subdir/ (a parent project that add_subdirectory's SOURCE_TREE, the
#                 core alone), build its consumer (SUBDIR_BUILD=build) or only compile it against
#                 the tilegen::tilegen of the parent (SUBDIR_BUILD=compile), and run what it built.
#
# MODE=install also checks that docs/embedding.md shows consumer/main.cpp and CMakeLists.txt whole.
# Also: WORK (scratch folder, emptied first), GENERATOR, MAKE_PROGRAM, CXX, BUILD_TYPE, PLUGINS
# (file names the install must have in lib/tilegen/), REQUIRE (targets the consumer must run on).
cmake_minimum_required(VERSION 3.25)
foreach(var MODE WORK GENERATOR CXX BUILD_TYPE)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_consumer.cmake: -D${var}=... is missing")
  endif()
endforeach()
get_filename_component(here ${CMAKE_CURRENT_LIST_DIR} ABSOLUTE)

# The consumer finds plugins by where libtilegen.so is, never through the caller's path, and
# find_package looks at the prefix given and nowhere a user's registry or environment points.
unset(ENV{TILEGEN_PLUGIN_PATH})
unset(ENV{CMAKE_PREFIX_PATH})
unset(ENV{tilegen_DIR})
# The programs run without LD_LIBRARY_PATH, which would win over their run paths (and could
# lend them another libtilegen.so); the compiler keeps it.
set(no_ld_path ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH)

string(TIMESTAMP t0 "%s")
macro(step what)
  string(TIMESTAMP now "%s")
  math(EXPR dt "${now} - ${t0}")
  message(STATUS "[${dt} s] ${what}")
endmacro()

# run(NAME cmd...): runs it; on failure prints its output and stops the test.
function(run name)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name} failed (${rc}):\n  ${ARGN}\n${out}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

set(configure_args -G "${GENERATOR}" -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
if(MAKE_PROGRAM)
  list(APPEND configure_args -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM})
endif()
set(require_args)
foreach(t IN LISTS REQUIRE)
  list(APPEND require_args --require ${t})
endforeach()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

if(MODE STREQUAL "install")
  # docs/embedding.md shows the consumer's two files whole: they must be what is tested here.
  file(READ ${here}/../../docs/embedding.md doc)
  foreach(f main.cpp CMakeLists.txt)
    file(READ ${here}/consumer/${f} text)
    string(FIND "${doc}" "${text}" at)
    if(at LESS 0)
      message(FATAL_ERROR "docs/embedding.md does not show tests/install/consumer/${f} as it is: copy it there")
    endif()
  endforeach()
  set(prefix ${WORK}/prefix)
  run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK}/staged)
  file(RENAME ${WORK}/staged ${prefix})
  step("installed ${BUILD_DIR} and moved it to ${prefix}")
  set(missing)
  foreach(f include/tilegen/tilegen.h include/tilegen/ir/function.h include/tilegen/passes/pass_manager.h
            lib/libtilegen.so lib/cmake/tilegen/tilegenConfig.cmake
            lib/cmake/tilegen/tilegenConfigVersion.cmake lib/cmake/tilegen/tilegenTargets.cmake bin/tilegen)
    if(NOT EXISTS ${prefix}/${f})
      list(APPEND missing ${f})
    endif()
  endforeach()
  foreach(p IN LISTS PLUGINS)
    if(NOT EXISTS ${prefix}/lib/tilegen/${p})
      list(APPEND missing lib/tilegen/${p})
    endif()
  endforeach()
  if(missing)
    message(FATAL_ERROR "the install lacks: ${missing}")
  endif()

  # The installed command runs from its new place and lists the plugins of the moved tree.
  run("tilegen targets" ${no_ld_path} ${prefix}/bin/tilegen targets)
  message("${run_output}")
  foreach(p IN LISTS PLUGINS)
    string(REGEX REPLACE "^libtilegen_(.*)\\.so$" "\\1" name ${p})
    if(NOT run_output MATCHES "(^|\n)${name} ")
      message(FATAL_ERROR "the installed tilegen does not list the ${name} plugin")
    endif()
  endforeach()
  step("the installed tilegen command runs")

  run("configure the consumer" ${CMAKE_COMMAND} -S ${here}/consumer -B ${WORK}/consumer ${configure_args}
      -DCMAKE_PREFIX_PATH=${prefix})
  file(STRINGS ${WORK}/consumer/CMakeCache.txt dir REGEX "^tilegen_DIR:")
  if(NOT dir STREQUAL "tilegen_DIR:PATH=${prefix}/lib/cmake/tilegen")
    message(FATAL_ERROR "find_package found another tilegen: ${dir}")
  endif()
  step("configured consumer/ with find_package(tilegen 0.1 REQUIRED)")
  run("build the consumer" ${CMAKE_COMMAND} --build ${WORK}/consumer)
  step("built consumer/")
  run("the consumer" ${no_ld_path} ${WORK}/consumer/consumer ${require_args})
  message("${run_output}")
  step("ran it")
elseif(MODE STREQUAL "subdir")
  run("configure the add_subdirectory parent" ${CMAKE_COMMAND} -S ${here}/subdir -B ${WORK}/subdir
      ${configure_args} -DTILEGEN_SOURCE=${SOURCE_TREE})
  step("configured subdir/, a parent project that add_subdirectory's ${SOURCE_TREE}")
  if(SUBDIR_BUILD STREQUAL "compile")
    # The consumer's object file alone: tilegen::tilegen's include directories and C++20
    # reach the parent's target; linking it would build a second libtilegen.
    run("compile the consumer" ${CMAKE_COMMAND} --build ${WORK}/subdir --target consumer_main)
    step("compiled the consumer's main.cpp against the subproject's tilegen::tilegen")
  else()
    run("build the consumer" ${CMAKE_COMMAND} --build ${WORK}/subdir --target consumer)
    step("built the consumer and the core it links (libtilegen.so)")
    run("the consumer" ${no_ld_path} ${WORK}/subdir/consumer ${require_args})
    message("${run_output}")
    step("ran it")
  endif()
else()
  message(FATAL_ERROR "run_consumer.cmake: MODE is install or subdir, not '${MODE}'")
endif()
