# Cross build for aarch64 Linux with Debian's cross compiler; ctest runs the binaries under
# qemu-user with the cross sysroot, so threaded GoogleTest suites run on an x86 machine.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;/usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# Header-only dependencies (nlohmann-json, CLI11) are installed for the host only. They are
# architecture-independent, so expose just those directories to the cross compiler.
set(SPINWISE_HOST_HEADERS ${CMAKE_BINARY_DIR}/host-headers)
foreach(dir nlohmann CLI)
  if(EXISTS /usr/include/${dir} AND NOT EXISTS ${SPINWISE_HOST_HEADERS}/${dir})
    file(MAKE_DIRECTORY ${SPINWISE_HOST_HEADERS})
    file(CREATE_LINK /usr/include/${dir} ${SPINWISE_HOST_HEADERS}/${dir} SYMBOLIC)
  endif()
endforeach()
set(CMAKE_CXX_FLAGS_INIT "-isystem ${SPINWISE_HOST_HEADERS}")
