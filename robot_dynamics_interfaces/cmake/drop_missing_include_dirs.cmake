# Workaround for ROS 2 interface packages installed from PyPI wheels ("ros-*"): their exported
# <pkg>__rosidl_generator_py targets list the Python/NumPy include directories of the wheel build
# host (e.g. /opt/python/cp311-cp311/...), which do not exist here, and CMake refuses to generate
# with non-existent include paths on imported targets. Drop only the entries that do not exist; on a
# normal ROS install every entry exists and nothing changes. Call it after the find_package()s and
# rosidl_generate_interfaces(), naming the interface packages depended on (directly or not).
# Also included by ../../underlay/control_msgs (scripts/build_interfaces.sh builds it).
function(drop_missing_include_dirs)
  set(_targets)
  if(NOT CMAKE_VERSION VERSION_LESS 3.21)
    get_property(_targets DIRECTORY PROPERTY IMPORTED_TARGETS)
  endif()
  foreach(_pkg IN LISTS ARGN)
    list(APPEND _targets "${_pkg}::${_pkg}__rosidl_generator_py")
  endforeach()
  list(REMOVE_DUPLICATES _targets)
  foreach(_target IN LISTS _targets)
    if(NOT _target MATCHES "__rosidl_generator_py$" OR NOT TARGET "${_target}")
      continue()
    endif()
    get_target_property(_incs "${_target}" INTERFACE_INCLUDE_DIRECTORIES)
    if(NOT _incs)
      continue()
    endif()
    set(_kept)
    set(_dropped)
    foreach(_inc IN LISTS _incs)
      # keep generator expressions and existing directories untouched
      if(_inc MATCHES "\\$<" OR EXISTS "${_inc}")
        list(APPEND _kept "${_inc}")
      else()
        list(APPEND _dropped "${_inc}")
      endif()
    endforeach()
    if(_dropped)
      message(STATUS "${_target}: dropping non-existent include dirs: ${_dropped}")
      set_target_properties("${_target}" PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_kept}")
    endif()
  endforeach()
endfunction()
