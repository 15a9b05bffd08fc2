# The core's layering, checked at configure time: for each layer, a source that includes a
# header of the layer above must not compile with that layer's include directories. A layer that
# could see upward would let ir depend on passes (or passes on the runtime) unnoticed.
#   ir      may include  tilegen/ir/...
#   passes  may include  tilegen/ir/..., tilegen/passes/...
#   api     may include  all three (and targets/common, the plugins, build on api)
function(tilegen_expect_no_upward_include layer header)
  get_target_property(dirs tilegen_${layer} INCLUDE_DIRECTORIES)
  set(probe ${PROJECT_BINARY_DIR}/layering/${layer}_upward.cpp)
  file(WRITE ${probe} "#include \"${header}\"\nint main() { return 0; }\n")
  try_compile(compiled ${PROJECT_BINARY_DIR}/layering/${layer}
    SOURCES ${probe}
    CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${dirs}"
    CXX_STANDARD 20)
  if(compiled)
    message(FATAL_ERROR "tilegen layering: the ${layer} layer can include ${header} (a layer above it); "
                        "keep its include directories to its own headers and those below")
  endif()
  # The same probe with the header's own layer visible must compile, or the check proves nothing.
  get_target_property(above_dirs ${ARGN} INCLUDE_DIRECTORIES)
  try_compile(sane ${PROJECT_BINARY_DIR}/layering/${layer}_sane
    SOURCES ${probe}
    CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${above_dirs}"
    CXX_STANDARD 20)
  if(NOT sane)
    message(FATAL_ERROR "tilegen layering: the probe ${header} does not compile even in its own layer")
  endif()
endfunction()

tilegen_expect_no_upward_include(ir tilegen/passes/pass_manager.h tilegen_passes)
tilegen_expect_no_upward_include(passes tilegen/runtime.h tilegen_api)
