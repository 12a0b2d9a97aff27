#pragma once
// The two workloads of spinwise-stress and the entry point that runs one.
//
// stats-lock replays a published MySQL incident (the case study "How Intel PAUSE instruction
// changes affect MySQL performance"): each business request was split into 256 statements sent at
// once to 8-core MySQL instances; running threads spiked past 100, `perf top` showed
// mutex_spin_wait -> ut_delay burning 28% of the CPU on one statistics latch, and setting
// innodb_spin_wait_delay from 30 to 6 took throughput from about 500 to 1,700 queries/s. Here
// `clients` closed-loop clients each issue a request that fans out into `fanout` sub-queries at
// once; a pool of `threads` workers (more than the CPUs) runs them; a sub-query works, takes the
// one shared statistics latch (the lock under test), works again (scenario_stats_lock.cpp).
//
// hot-page replays the SQL Server last-page latch hot spot measured in the white paper "SQL Server
// 2014 実践シリーズ No.1: インメモリ OLTP 機能の実践的な利用方法" (SQL Quality for Microsoft Japan,
// 2014, section 1.12): 100 concurrent users, transactions of 3 inserts, 3 updates and 6 selects,
// inserts crowding the last page of an IDENTITY-keyed clustered index, and page-latch waits read
// as Latch Waits/sec against Batch Requests/sec (7,331 against 23,945). The same clients and pool
// run transactions whose statements latch pages (scenario_hot_page.cpp).
//
// A run lasts `duration_s` in all: the first `warmup_s` are not measured. A window that has
// counted fewer than `min_requests` requests by then goes on until it has, up to `max_duration_s`.
// At the end workers stop claiming sub-queries, so the run ends on time whatever the lock does; a
// request cut off that way is not counted (engine.cpp).

#include "run_result.hpp"
#include "workload_config.hpp"

namespace spinwise::stress {

// Resolves `config` (resolve()), runs it and returns what its window measured. Throws
// std::invalid_argument for a bad configuration, std::runtime_error when the threads cannot start.
run_result run_workload(const workload_config& config);

}  // namespace spinwise::stress
