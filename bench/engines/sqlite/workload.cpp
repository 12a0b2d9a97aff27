// The workload (workload.hpp): a thread's set-up, its operation loop, and the operation.
#include "workload.hpp"

#include <chrono>
#include <cstring>
#include <thread>

namespace spinwise::sqlite_bench {
namespace {

constexpr int kValueBytes = 32;
// Keys are (thread + 1) << 40 | n: unique across threads in the shared modes, never 0, and far
// from any count one run reaches.
constexpr int kKeyShift = 40;

void wait_for(const shared_state& st, int p) {
  while (st.phase.load(std::memory_order_acquire) < p)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// One 64-bit xorshift step: the SELECT's key choice, cheap and the same in every arm.
std::uint64_t next_random(std::uint64_t& x) noexcept {
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return x;
}

class worker {
 public:
  worker(const options& o, int index, sqlite3* shared_db, shared_state& st, thread_result& r)
      : o_(o), index_(index), db_(shared_db), st_(st), r_(r), rng_(0x9e3779b97f4a7c15ULL * (index + 1)) {}

  void run() {
    r_.error = set_up();
    st_.ready.fetch_add(1, std::memory_order_acq_rel);
    wait_for(st_, kWarmup);
    if (!r_.error) loop();
    st_.stopped.fetch_add(1, std::memory_order_acq_rel);
    wait_for(st_, kFinish);
    insert_.reset();
    select_.reset();
    if (o_.m == mode::private_db && !r_.error) r_.check = check_table(db_);
    own_.reset();
  }

 private:
  sqlite_error set_up() {
    if (o_.m != mode::serialized) {
      if (sqlite_error e = open_db(o_, own_)) return e;
      db_ = own_.get();
    }
    if (o_.m == mode::wal) {
      if (sqlite_error e = wal_connection(db_)) return e;
    }
    if (o_.m == mode::private_db) {
      if (sqlite_error e = exec(db_, "CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB NOT NULL)")) return e;
    }
    if (sqlite_error e = prepare(db_, "INSERT INTO t(k, v) VALUES(?1, ?2)", insert_)) return e;
    return prepare(db_, "SELECT v FROM t WHERE k = ?1", select_);
  }

  std::int64_t key(std::uint64_t n) const noexcept {
    return static_cast<std::int64_t>((static_cast<std::uint64_t>(index_) + 1) << kKeyShift | n);
  }

  // The row's value names its key, so that a SELECT can tell its row from another.
  void fill_value(std::int64_t k) noexcept {
    for (int i = 0; i < kValueBytes; i += 8) std::memcpy(value_ + i, &k, 8);
  }

  void loop() {
    std::uint64_t retries = 0;
    for (;;) {
      const int p = st_.phase.load(std::memory_order_acquire);
      if (p >= kStop || (o_.ops != 0 && p == kMeasure && r_.ops >= o_.ops)) return;
      const bool measured = p == kMeasure;
      const auto t0 = clock_type::now();
      if (sqlite_error e = operation(retries)) {
        r_.error = e;
        return;
      }
      if (measured) {
        r_.latency.record(static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now() - t0).count()));
        ++r_.ops;
        r_.locked_retries += retries;
      }
      retries = 0;
    }
  }

  // INSERT a new row, then SELECT one this thread inserted before (or just now).
  sqlite_error operation(std::uint64_t& retries) {
    const std::int64_t k = key(r_.inserts);
    fill_value(k);
    sqlite3_bind_int64(insert_.get(), 1, k);
    sqlite3_bind_blob(insert_.get(), 2, value_, kValueBytes, SQLITE_STATIC);
    int rc = step_retrying(insert_.get(), false, retries);
    sqlite3_reset(insert_.get());
    if (rc != SQLITE_OK) return fail(rc, "INSERT", db_);
    ++r_.inserts;

    const std::int64_t want = key(next_random(rng_) % r_.inserts);
    sqlite3_bind_int64(select_.get(), 1, want);
    rc = step_retrying(select_.get(), true, retries);
    if (rc == SQLITE_OK) {
      const void* v = sqlite3_column_blob(select_.get(), 0);
      std::int64_t got = 0;
      if (v != nullptr && sqlite3_column_bytes(select_.get(), 0) == kValueBytes) std::memcpy(&got, v, 8);
      if (got != want) ++r_.select_misses;
    } else if (rc == SQLITE_DONE) {
      ++r_.select_misses;
      rc = SQLITE_OK;
    }
    sqlite3_reset(select_.get());
    return rc == SQLITE_OK ? sqlite_error{} : fail(rc, "SELECT", db_);
  }

  const options& o_;
  const int index_;
  sqlite3* db_;  // the shared connection (serialized), else own_'s
  db_ptr own_;
  stmt_ptr insert_, select_;
  shared_state& st_;
  thread_result& r_;
  std::uint64_t rng_;
  unsigned char value_[kValueBytes] = {};
};

}  // namespace

void run_thread(const options& o, int index, sqlite3* shared_db, shared_state& st, thread_result& r) {
  worker(o, index, shared_db, st, r).run();
}

}  // namespace spinwise::sqlite_bench
