// The tools' lock catalogue (bench/spinwise_locks.hpp) compiled against the headers of a revision
// that predates most of its locks (old_revision/spinwise/spinwise.hpp), as bench/compare.sh
// compiles spinwise-cell against each revision it compares. Bug guarded: a catalogue that names
// its locks outright stops the harness from building against any revision older than its newest
// lock, and so every comparison with such a revision.

#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <vector>

#include "spinwise_locks.hpp"

namespace cat = spinwise::bench_catalog;

TEST(LockCatalogue, DeclaresOnlyTheLocksTheHeadersHave) {
  std::vector<std::string> declared, absent;
  cat::each_lock([&](auto row) {
    using R = decltype(row);
    (cat::declared<typename R::type> ? declared : absent).push_back(R::name);
  });
  EXPECT_EQ(declared, (std::vector<std::string>{"tas_mutex", "sx_lock"}));
  EXPECT_EQ(absent, (std::vector<std::string>{"ttas_mutex", "ticket_mutex", "mcs_mutex", "hybrid_mutex",
                                              "spin_shared_mutex", "hybrid_shared_mutex"}));
  // A declared row is the revision's own type, not a stand-in of the same name.
  static_assert(std::is_same_v<cat::tas_mutex_row::type, spinwise::tas_mutex>);
  static_assert(std::is_same_v<cat::sx_lock_row::type, spinwise::sx_lock>);
}

TEST(LockCatalogue, RowsCarryTheirColumns) {
  static_assert(!cat::tas_mutex_row::shared && !cat::tas_mutex_row::parks && !cat::tas_mutex_row::fifo);
  static_assert(cat::ticket_mutex_row::fifo && cat::mcs_mutex_row::fifo);
  static_assert(cat::hybrid_mutex_row::parks && !cat::hybrid_mutex_row::shared);
  static_assert(cat::sx_lock_row::shared && cat::sx_lock_row::parks && !cat::sx_lock_row::fifo);
  static_assert(cat::spin_shared_mutex_row::shared && !cat::spin_shared_mutex_row::parks);
  SUCCEED();
}
