#pragma once
// The umbrella header of a revision older than most of the tools' lock catalogue
// (bench/spinwise_locks.hpp), for lock_catalogue_test.cpp: it declares two of the catalogue's locks
// under their public names and none of the others, as bench/compare.sh may find when it builds
// spinwise-cell against an older revision.

namespace spinwise {

struct tas_mutex {
  void lock() {}
  void unlock() {}
};

struct sx_lock {
  void lock() {}
  void unlock() {}
};

}  // namespace spinwise
