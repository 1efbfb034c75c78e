# Which languages' type support rosidl generates. C and Python always (rclpy uses them); C++ (rosidl's
# cpp generator and the cpp, fastrtps_cpp and introspection_cpp type supports: ~half of the build's
# CPU) only where a C++ client can use it. By default that is where rclcpp is installed, as in every
# ROS installation (which then builds exactly what rosidl_default_generators builds); an underlay of
# PyPI ROS wheels has rclpy and no rclcpp, so nothing there can load C++ type support.
# -DINTERFACES_CXX=ON or OFF decides explicitly. Call after find_package(rosidl_default_generators)
# and before rosidl_generate_interfaces() (it filters the generators rosidl runs).
# Also included by ../../underlay/control_msgs (scripts/build_interfaces.sh builds it).
macro(select_cxx_type_support)
  if(NOT DEFINED INTERFACES_CXX)
    ament_index_has_resource(_rclcpp_prefix packages rclcpp)
    if(_rclcpp_prefix)
      set(INTERFACES_CXX ON)
    else()
      set(INTERFACES_CXX OFF)
    endif()
  endif()
  if(NOT INTERFACES_CXX)
    list(FILTER AMENT_EXTENSIONS_rosidl_generate_idl_interfaces EXCLUDE
         REGEX "^rosidl_(generator|typesupport|typesupport_fastrtps|typesupport_introspection)_cpp:")
    message(STATUS "${PROJECT_NAME}: C and Python type support only (no rclcpp found; -DINTERFACES_CXX=ON adds C++)")
  endif()
endmacro()
