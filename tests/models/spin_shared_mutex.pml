/*
 * spin_shared_mutex.pml: the writer reservation, the drain and the readers' turn of the
 * reader/writer protocol include/spinwise/detail/rw_protocol.hpp with spin_shared_mutex's wait
 * (rw_spin_wait, include/spinwise/spin_shared_mutex.hpp; rw_spinlock until 0.2.0), checked
 * exhaustively by SPIN (tests/models/run_models.sh; docs/model-checking.md).
 *
 * Lock word state_ (64 bits): W (bit 0), S (bit 1: readers' turn), readers inside, queued
 * readers. The lock never parks: every wait is a poll loop.
 *
 * Two runs of this file:
 *   safety (default; pan built with -DSAFETY): writers W0 and W1 and readers R2 and R3, two
 *     acquisitions each. Checked:
 *       - exclusion: a writer enters only with nobody inside, a reader only with no writer
 *         inside (assertions at each entry);
 *       - the word in every reachable state (the monitor process): W exactly while a writer has
 *         reserved or holds the lock; readers inside and queued readers equal the ghost counts;
 *         S only while queued readers > 0; readers inside under W only before the writer enters;
 *       - nothing waits forever once the lock is free: every wait is a blocking guard on the
 *         condition the poll loop waits for, so a thread that could poll forever is a thread
 *         that is blocked; a state where nothing can move and some thread has not ended is an
 *         invalid end state, which pan reports (a writer waiting for a readers' turn that never
 *         ends, a reader waiting for a W that nobody clears).
 *   liveness (spin -DLIVENESS; pan built with -a, run with -f, weak fairness): W0 and W1 lock
 *     and unlock forever, R2 and R3 take the lock shared forever. Checked (LTL, acceptance
 *     cycles), under weak fairness (a thread that can go on polling eventually polls again, so
 *     a spin budget, always finite in the header, eventually runs out):
 *       turn:  [] (R2 queued -> <> R2 not queued): a queued reader gets in however the writers
 *              race, because its spent budget starts a readers' turn that writers wait out;
 *       drain: [] (W0 holds the reservation -> <> W0 inside): readers cannot starve a writer
 *              that has reserved.
 *     Writers among themselves are unordered by design (TTAS): no claim that a writer waiting
 *     to reserve gets in.
 *
 * Abstractions, and why each is sound:
 *   - A poll loop `while (!cond(load())) pause();` followed by the CAS that acts on the loaded
 *     value is one guarded atomic step `cond -> act`. Under sequential consistency the CAS
 *     succeeds exactly when the word still equals the value that satisfied cond, so its effect
 *     is that of the whole loop's last iteration at the CAS's instant; failed CASes and polls
 *     that find cond false change nothing (stutter). The blocking guard is enabled exactly when
 *     some poll would succeed, which is what makes deadlock detection and fairness meaningful.
 *   - The spin budget (Policy::waiter::is_completed): nondeterministic. A queued reader that sees
 *     W set and S clear may set S (its budget ran out) at any time, or not yet.
 *   - Yields, backoff delays, statistics: no lock state; left out.
 *   - Memory orders: sequential consistency. Every acquisition and release is an RMW on the one
 *     word (or, for a draining writer, an acquire load of it that pairs with the readers'
 *     release fetch_sub, as the header documents), and RMWs on one atomic are totally ordered in
 *     C++. Orderings of the protected data are for the tests under TSan.
 *
 * Mutants that must fail (the runner checks the first two):
 *   -DMUTANT_TURN_NOT_CLEARED     the last queued reader leaves S set (safety: a writer waits
 *                                 forever on a free lock; the S invariant breaks)
 *   -DLIVENESS -DMUTANT_WRITER_IGNORES_TURN   writers reserve during a readers' turn
 *                                 (liveness, turn: acceptance cycle, the queued reader starves)
 */

#define NT 4

bool wbit, sbit;   /* state_ bits 0 (W) and 1 (S); not W and S: W is an LTL operator in SPIN */
byte r, k;   /* readers inside, queued readers */

/* Ghost state for the checks. */
byte wowner;      /* 1 + the writer holding W (reserved or inside), 0 none */
byte w_in, r_in;  /* writers / readers in their critical section */
byte queued;      /* readers counted in k */
bool rq[NT];      /* rq[t]: reader t is queued */

#ifdef MUTANT_WRITER_IGNORES_TURN
#define MAY_RESERVE (!wbit)
#else
#define MAY_RESERVE (!wbit && !sbit)   /* writer_may_reserve */
#endif

inline writer_enter(me) {
  assert(wowner == me + 1 && r == 0 && r_in == 0 && w_in == 0);
  w_in++
}

/* lock(): CAS 0 -> W, or CAS s -> s|W when writer_may_enter(s) (the fast path), else
 * acquire_slow(): reserve (W): 0 -> 1 once writer_may_reserve, then drain. */
inline writer_lock(me) {
  atomic {
    MAY_RESERVE ->
    wbit = true; wowner = me + 1;
    if
    :: r == 0 -> writer_enter(me); entered = true
    :: else -> entered = false
    fi
  };
  if
  :: !entered -> atomic { r == 0 -> writer_enter(me) }   /* drain: poll until readers leave */
  :: else -> skip
  fi
}

/* unlock(): fetch_sub(kWriter) */
inline writer_unlock(me) {
  atomic { assert(wbit && wowner == me + 1 && w_in == 1); w_in--; wbit = false; wowner = 0 }
}

/* lock_shared(): CAS n -> n+1 unless W; acquire_shared_slow(): the same, or queue (k+1) when W;
 * then poll: enter by itself once W clears (self_admitted: r+1, k-1, S cleared with the last),
 * setting S when its budget is spent. */
inline reader_lock(me) {
  do
  :: atomic { !wbit -> assert(w_in == 0); r++; r_in++; in_queue = false }; break
  :: atomic { wbit -> k++; queued++; rq[me] = true; in_queue = true }; break
  od;
  if
  :: in_queue ->
     do
     :: atomic {
          !wbit -> assert(w_in == 0);
          k--; queued--; rq[me] = false; r++; r_in++;
#ifndef MUTANT_TURN_NOT_CLEARED
          if
          :: k == 0 -> sbit = false
          :: else -> skip
          fi
#endif
        };
        break
     :: atomic { wbit && !sbit -> sbit = true }   /* budget spent: (S): 0 -> 1 (strong CAS on s) */
     od
  :: else -> skip
  fi
}

/* unlock_shared(): fetch_sub(kReaderOne) */
inline reader_unlock() {
  atomic { assert(r > 0 && r_in > 0); r--; r_in-- }
}

#ifdef LIVENESS

proctype writer(byte me) {
  bool entered;
  do
  :: writer_lock(me); writer_unlock(me)
  od
}

proctype reader(byte me) {
  bool in_queue;
  do
  :: reader_lock(me);
     reader_unlock()
  od
}

ltl turn { [] (rq[2] -> <> !rq[2]) }
ltl drain { [] ((wbit && wowner == 1 && w_in == 0) -> <> (w_in == 1)) }

init {
  atomic {
    run writer(0);
    run writer(1);
    run reader(2);
    run reader(3)
  }
}

#else

proctype writer(byte me; byte iters) {
  bool entered;
  byte i = 0;
  do
  :: i == iters -> break
  :: i < iters -> writer_lock(me); writer_unlock(me); i++
  od;
  assert(wowner != me + 1)
}

proctype reader(byte me; byte iters) {
  bool in_queue;
  byte i = 0;
  do
  :: i == iters -> break
  :: i < iters -> reader_lock(me); reader_unlock(); i++
  od;
  assert(!rq[me])
}

/* The word's invariants, checked in every reachable state: this process can move only when
 * one is violated. */
active proctype monitor() {
end:
  atomic {
    !((wbit == (wowner != 0)) && r == r_in && k == queued && (!sbit || k > 0) &&
      (!(wbit && r > 0) || w_in == 0) && w_in <= 1 && r <= NT && k <= NT) ->
    assert(false)
  }
}

init {
  atomic {
    run writer(0, 2);
    run writer(1, 2);
    run reader(2, 2);
    run reader(3, 2)
  }
}

#endif
