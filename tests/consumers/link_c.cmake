# Links C programs to an installed spinwise the three usual ways, and runs each (issue 44, item 3):
#   1. `cc prog.c $(pkg-config --cflags --libs spinwise-c)`, no --static (and spinwise-sqlite),
#      with PKG_CONFIG_PATH pointing into the prefix: project/c_consumer.c, project/sqlite_consumer.c
#   2. a C-only CMake project (project(... LANGUAGES C)), find_package(spinwise COMPONENTS c) and
#      sqlite where installed, with CMAKE_PREFIX_PATH: c_only/
#   3. a Meson project, dependency('spinwise-c') and 'spinwise-sqlite' by pkg-config: meson/
# Bug guarded: with the default (static) install, 1 failed on undefined libstdc++ symbols (the
# C++ library was only in Libs.private) and 2 on the same (a C-only project links with the C
# compiler). Each program must build, run and print its line.
#   cmake -DPREFIX=<install prefix> -DWORK_DIR=<scratch dir> [-DBUILD_DIR=<tree to install into
#         PREFIX first>] [-DGENERATOR=<CMake generator>] [-DCC=<C compiler>] -P link_c.cmake
# Needs pkg-config and meson (Debian: pkg-config, meson; tools/setup.sh installs both).
cmake_minimum_required(VERSION 3.21)
include(${CMAKE_CURRENT_LIST_DIR}/../common/run_and_check.cmake)  # run(), fail()
set(driver link_c)

# `pattern` in the caller: a whole line "<line>", or "<line><with_sqlite>" when SQLite is installed.
function(expected_line pattern line with_sqlite)
  if(sqlite)
    string(APPEND line "${with_sqlite}")
  endif()
  set(${pattern} "^${line}$" PARENT_SCOPE)
endfunction()

# Runs `program` and checks that its output matches `pattern`.
function(run_and_expect what program pattern)
  run(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${libdir} ${program})
  string(STRIP "${last_output}" out)
  if(NOT out MATCHES "${pattern}")
    fail("${what}: ${program} printed '${out}', not a line matching '${pattern}'")
  endif()
  message(STATUS "link_c: ${what}: ${out}")
endfunction()

if(NOT PREFIX OR NOT WORK_DIR)
  fail("set -DPREFIX=<install prefix> and -DWORK_DIR=<scratch dir>")
endif()
get_filename_component(PREFIX "${PREFIX}" ABSOLUTE)
set(consumers ${CMAKE_CURRENT_LIST_DIR})
if(NOT CC)
  set(CC cc)
endif()
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
if(BUILD_DIR)
  run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX})
endif()

# Where the install put its .pc files and libraries (GNUInstallDirs: lib, lib64, lib/<triplet>).
file(GLOB_RECURSE c_pc ${PREFIX}/spinwise-c.pc)
file(GLOB_RECURSE headers_pc ${PREFIX}/spinwise.pc)
if(NOT c_pc OR NOT headers_pc)
  fail("no spinwise-c.pc or spinwise.pc under ${PREFIX}: install the headers, runtime and c components")
endif()
list(GET c_pc 0 c_pc)
list(GET headers_pc 0 headers_pc)
get_filename_component(pc_dir ${c_pc} DIRECTORY)
get_filename_component(headers_pc_dir ${headers_pc} DIRECTORY)
get_filename_component(libdir ${pc_dir} DIRECTORY)
set(ENV{PKG_CONFIG_PATH} "${pc_dir}:${headers_pc_dir}")
set(sqlite OFF)
if(EXISTS ${pc_dir}/spinwise-sqlite.pc)
  set(sqlite ON)
endif()

# 1. pkg-config, as one types it into a shell.
find_program(PKG_CONFIG pkg-config)
if(NOT PKG_CONFIG)
  fail("pkg-config not found (Debian: pkg-config)")
endif()
function(pc_program name pc pattern)
  run(sh -c "${CC} -std=c99 -Wall -Wextra -Werror ${consumers}/project/${name}.c $(${PKG_CONFIG} --cflags --libs ${pc}) -o ${WORK_DIR}/${name}")
  run_and_expect("pkg-config ${pc}" ${WORK_DIR}/${name} "${pattern}")
endfunction()
pc_program(c_consumer spinwise-c "^spinwise C consumer: a [0-9]+-byte JSON report$")
if(sqlite)
  pc_program(sqlite_consumer spinwise-sqlite "^spinwise SQLite consumer: SQLite [0-9.]+ on hybrid mutexes$")
endif()

# 2. A C-only CMake project.
set(gen "")
if(GENERATOR)
  set(gen -G "${GENERATOR}")
endif()
run(${CMAKE_COMMAND} ${gen} -S ${consumers}/c_only -B ${WORK_DIR}/c_only -DCMAKE_C_COMPILER=${CC}
    -DCMAKE_PREFIX_PATH=${PREFIX})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/c_only)
expected_line(pattern "spinwise C-only consumer: 6 mutex kinds" " and SQLite [0-9.]+ on ticket mutexes")
run_and_expect("CMake, LANGUAGES C" ${WORK_DIR}/c_only/c_only "${pattern}")

# 3. Meson.
find_program(MESON meson)
if(NOT MESON)
  fail("meson not found (Debian: meson; tools/setup.sh installs it)")
endif()
run(${CMAKE_COMMAND} -E env CC=${CC} ${MESON} setup ${WORK_DIR}/meson ${consumers}/meson)
run(${MESON} compile -C ${WORK_DIR}/meson)
expected_line(pattern "spinwise Meson consumer: a hybrid rwlock" ", SQLite [0-9.]+ on hybrid mutexes")
run_and_expect("Meson" ${WORK_DIR}/meson/meson_consumer "${pattern}")
