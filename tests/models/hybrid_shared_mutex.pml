/*
 * hybrid_shared_mutex.pml: the reservation, drain, readers' turn and park/wake protocol of
 * hybrid_shared_mutex: the reader/writer protocol include/spinwise/detail/rw_protocol.hpp with
 * the parking wait rw_park_wait (include/spinwise/hybrid_shared_mutex.hpp), the word of
 * detail/rw_word.hpp and the sleep protocol of detail/futex_park.hpp, checked exhaustively by SPIN
 * (tests/models/run_models.sh; docs/model-checking.md).
 *
 * Safety: three threads, bounded iterations, two configurations (spin -DCONFIG=1 or 2; pan
 * built with -DSAFETY):
 *   CONFIG 1 (default): writer W0, two acquisitions, each lock() or try_lock_until();
 *                       writer W1, one try_lock_until(); reader R2, one lock_shared() or
 *                       try_lock_shared_until()
 *   CONFIG 2:           writer W0, two acquisitions, each lock() or try_lock_until(); reader R1, two
 *                       try_lock_shared_until(); reader R2, one lock_shared()
 * CONFIG 1 has writers racing for the reservation, a reader queued behind both and a timed
 * writer withdrawing a reservation; CONFIG 2 has readers inside a drain, a readers' turn with
 * two queued readers and a timed reader withdrawing from the queue.
 *
 * Checked:
 *   - exclusion: a writer enters only with no writer and no reader inside; a reader only with no
 *     writer inside (assertions where each enters);
 *   - the word is consistent in every reachable state (the monitor process): W exactly while
 *     some thread holds the reservation or the lock; readers inside = readers in their critical
 *     section; queued readers = readers in the queue; S (readers' turn) only while queued
 *     readers > 0; W with readers inside only before the writer has entered; no count wraps;
 *     and a thread that leaves (by unlock or a timed give-up) never leaves W behind;
 *   - no lost wake-up: a thread blocked in futex_wait is a thread that has not ended; a state in
 *     which nothing can move while some thread still sleeps is an invalid end state (pan
 *     reports it). The same check finds a thread stuck on a condition nobody will make true
 *     (a writer left waiting for a readers' turn that never ends, for instance), since the model
 *     lets every waiter park at any point, as the header does once its budget is spent.
 *
 * Liveness (spin -DLIVENESS; pan built with -a, run with -f, weak fairness): writer W0 locks and
 * unlocks forever (the writer that releases and comes straight back), readers R1 and R2 lock
 * shared forever, all untimed, parking included. Checked (LTL, acceptance cycles):
 *   turn:  [] (R2 queued -> <> R2 not queued): a queued reader gets in; its spent budget starts a
 *          readers' turn that keeps the writer from reserving again, and the parked readers are
 *          woken when the writer leaves;
 *   drain: [] (W0 holds the reservation -> <> W0 inside): readers cannot starve a writer that
 *          has reserved, asleep or not.
 * Weak fairness means a thread that can move eventually does; a parked thread cannot move until
 * woken, so these properties also depend on every needed wake-up being sent.
 *
 * Abstractions, and why each is sound:
 *   - The word's fields are separate variables; each C++ RMW (CAS, fetch_sub, fetch_and) is one
 *     atomic step over them. A CAS loop that reads the word and then CASes it (the reads in
 *     acquire_slow, park, withdraw_*, unlock) is one step: under sequential consistency a CAS
 *     that succeeds on an unchanged word has the effect of the whole read-decide-write at its
 *     own instant, and a failing one changes nothing and retries.
 *   - Spin budgets, randomized delays, the one yield (park_episodes::pause): nondeterministic.
 *     A waiter may retry (not being scheduled stands for any number of polls), park, or, for a
 *     queued reader, find its budget spent and CAS the readers' turn S in; a queued reader parks
 *     only with S set, as in the header (pause() says "park" only after is_completed(), which
 *     first sets S).
 *   - The sequence words (reader_seq_, writer_seq_) are not counters here: each thread has a
 *     park state pk[]: IDLE, FRESH (it loaded seq: e = seq.load), STALE (seq was bumped since),
 *     ASLEEP. A bump (wake(): seq.fetch_add) turns FRESH into STALE for the threads parking on
 *     that word; futex_wait(seq, e) is one atomic step that sleeps iff the thread is still
 *     FRESH (the kernel's seq == e check), else returns at once; futex_wake_all wakes every
 *     ASLEEP thread on that word. This is exact as long as a sequence word does not wrap
 *     (2^32 bumps between one thread's load and its futex_wait), which the header assumes too.
 *   - Readers park on reader_seq_, writers on writer_seq_ (a thread's role is fixed).
 *   - Timeouts: the deadline is a nondeterministic choice at each place the header calls
 *     expired(); each "expired" branch ends the call (with withdraw_* first), so monotonicity
 *     needs no state. A timed futex_wait_for may return at any time (park_limit, the periodic
 *     re-read of a clock that can jump, a timeout).
 *   - Spurious wake-ups: one per run (SPURIOUS, default 1; 0 in the liveness runs), for any
 *     sleeper; bounded so that a sleeper cannot always wake itself, which would make the
 *     lost-wake-up check vacuous.
 *   - Memory orders: sequential consistency. Every decision is an RMW on the one 64-bit word,
 *     and RMWs on one atomic are totally ordered in C++. The one cross-variable argument, that
 *     a sleeper's read of seq (acquire) and the waker's bump (release) order the parked-bit
 *     clear before the sleeper's re-read of the word (the message-passing step of the proof in
 *     detail/futex_park.hpp), holds because of exactly those acquire/release pairs, which the header
 *     documents on each operation; under SC it holds trivially. Orderings of the protected data
 *     are for the tests under TSan, not for this model.
 *
 * Modelled with the fix made alongside this model: a timed writer whose deadline has passed
 * when it could reserve, with readers inside, returns false without reserving (try_lock
 * semantics). Reserving, then withdrawing at once (the old code) stays reachable here too,
 * because the deadline may pass between the reservation and the first drain check.
 *
 * Mutants that must fail (the runner checks all but the last):
 *   -DMUTANT_UNLOCK_NO_WAKE     unlock() clears RP/WP but wakes nobody (invalid end state)
 *   -DMUTANT_TURN_END_NO_WAKE   the reader ending a readers' turn does not wake the writers
 *                               (invalid end state)
 *   -DLIVENESS -DMUTANT_WRITER_IGNORES_TURN   writers reserve during a readers' turn (turn:
 *                               acceptance cycle; the safety runs pass: S is only about fairness)
 *   -DMUTANT_NO_WAKE_DRAINED    unlock_shared() never wakes the draining writer (invalid end state)
 */

#ifndef SPURIOUS
#ifdef LIVENESS
#define SPURIOUS 0   /* a spurious wake-up only adds a step; the liveness runs leave it out */
#else
#define SPURIOUS 1
#endif
#endif
#ifndef CONFIG
#define CONFIG 1
#endif

#define N 3

/* The lock word state_ (bits W, S, RP, WP; readers inside; queued readers). */
bool W, S, RP, WP;
byte r, k;

/* Park states (see above) and each thread's role. */
#define IDLE 0
#define FRESH 1
#define STALE 2
#define ASLEEP 3
byte pk[N];
bool is_reader[N];
byte spurious = SPURIOUS;

/* Ghost state for the checks. */
byte wowner;      /* 1 + the thread holding W (reserved or inside), 0 none */
byte w_in, r_in;  /* writers / readers in their critical section */
byte queued;      /* readers counted in k */
bool rq[N];       /* rq[t]: reader t is queued (counted in k) */

#define BUMP1(t, rd) if :: is_reader[t] == rd && pk[t] == FRESH -> pk[t] = STALE :: else -> skip fi
#define WAKE1(t, rd) if :: is_reader[t] == rd && pk[t] == ASLEEP -> pk[t] = IDLE :: else -> skip fi

/* wake(seq) = detail::wake_sleepers(seq): seq.fetch_add(1) (one step), then futex_wake_all(seq)
 * (another). rd: true for reader_seq_, false for writer_seq_. */
inline wake(rd) {
  atomic { BUMP1(0, rd); BUMP1(1, rd); BUMP1(2, rd) };
  atomic { WAKE1(0, rd); WAKE1(1, rd); WAKE1(2, rd) }
}

/* park(seq, parked_bit, ready, d) = detail::park (futex_park.hpp): e = seq.load; re-read the
 * word: return if ready, else set the parked bit (CAS) unless set; futex_wait(seq, e), or
 * futex_wait_for(seq, e, d.park_limit()) when timed. */
inline park(me, READY, BIT) {
  pk[me] = FRESH;
  atomic {
    if
    :: READY -> pk[me] = IDLE
    :: else -> BIT = true
    fi
  }
  if
  :: pk[me] == FRESH || pk[me] == STALE ->
     atomic {
       if
       :: pk[me] == FRESH -> pk[me] = ASLEEP  /* the kernel sleeps: seq == e */
       :: else -> pk[me] = IDLE               /* seq != e: returns at once */
       fi
     }
     if
     :: pk[me] != ASLEEP                                                    /* woken */
     :: atomic { pk[me] == ASLEEP && spurious > 0 -> spurious--; pk[me] = IDLE }  /* spurious */
     :: atomic { timed && pk[me] == ASLEEP -> pk[me] = IDLE }              /* timed out */
     fi
  :: else -> skip
  fi
}

/* wake_after_release(old): RP was set: wake readers; WP set and no readers' turn: wake writers. */
inline wake_after_release() {
#ifndef MUTANT_UNLOCK_NO_WAKE
  if
  :: oRP -> wake(true)
  :: else -> skip
  fi;
  if
  :: oWP && !oS -> wake(false)
  :: else -> skip
  fi
#else
  skip
#endif
}

/* released(s) as one CAS: W and RP cleared, WP cleared unless S; the old bits kept for the wake. */
inline release_word() {
  oRP = RP; oWP = WP; oS = S;
  W = false; RP = false;
  if
  :: !S -> WP = false
  :: else -> skip
  fi;
  wowner = 0
}

/* ---- writers ---------------------------------------------------------------------------- */

#ifdef MUTANT_WRITER_IGNORES_TURN
#define MAY_RESERVE (!W)
#else
#define MAY_RESERVE (!W && !S)   /* writer_may_reserve */
#endif

inline writer_enter(me) {
  assert(wowner == me + 1 && r == 0 && r_in == 0 && w_in == 0);
  w_in++
}

/* acquire_slow(d) */
inline writer_lock_slow(me) {
  /* Reserve: wait for no W and no S, then (W): 0 -> 1. */
  do
  :: atomic {
       MAY_RESERVE ->
       if
       :: timed && r > 0 -> ok = false  /* the fix: expired with readers inside: no reservation */
       :: true -> W = true; wowner = me + 1; ok = true
       fi
     };
     break
  :: !MAY_RESERVE ->
     if
     :: timed -> ok = false; break     /* if (d.expired()) return false */
     :: park(me, MAY_RESERVE, WP)       /* park(writer_seq_, kWritersParked, writer_may_reserve) */
     fi
  od;
  if
  :: ok ->
     /* Drain: wait for the readers inside to leave. */
     do
     :: atomic { r == 0 -> writer_enter(me) }; break  /* drained(load(acquire)) */
     :: r > 0 ->
        if
        :: timed ->
           /* withdraw_reservation(): keep the lock if drained after all, else give W up */
           atomic {
             if
             :: r == 0 -> writer_enter(me); ok = true
             :: else -> release_word(); ok = false
             fi
           };
           if
           :: !ok -> wake_after_release()
           :: else -> skip
           fi;
           break
        :: park(me, r == 0, WP)          /* park(writer_seq_, kWritersParked, drained) */
        fi
     od
  :: else -> skip
  fi
}

inline writer_lock(me) {
  /* word::try_enter_writer (rw_word.hpp): (W, readers): 0,0 -> 1,0 when writer_may_enter */
  atomic {
    if
    :: !W && !S && r == 0 -> W = true; wowner = me + 1; writer_enter(me); ok = true
    :: else -> ok = false
    fi
  };
  if
  :: !ok -> writer_lock_slow(me)
  :: else -> skip
  fi
}

/* unlock(): CAS to released(s), then wake_after_release(s). */
inline writer_unlock(me) {
  atomic { assert(W && wowner == me + 1 && w_in == 1); w_in--; release_word() };
  wake_after_release()
}

proctype writer(byte me; byte iters; byte mode) {
  bool ok, timed, oRP, oWP, oS;
  byte i = 0;
  do
  :: i == iters -> break
  :: i < iters ->
     if
     :: mode != 1 -> timed = false
     :: mode != 0 -> timed = true
     fi;
     writer_lock(me);
     if
     :: ok -> writer_unlock(me)
     :: else -> skip
     fi;
     i++
  od;
  assert(wowner != me + 1 && pk[me] == IDLE)
}

/* ---- readers ---------------------------------------------------------------------------- */

/* leave_queue(s, next) for a queue exit, next = word::self_admitted(s) (enter: r+1, k-1) or
 * word::dequeued(s) (give up: k-1); S cleared with the last queued reader, and WP cleared in the
 * same CAS when that ends a readers' turn. */
inline leave_queue(me, enter) {
  ends_turn = S && k == 1;
  k--; queued--; rq[me] = false;
  if
  :: k == 0 -> S = false
  :: else -> skip
  fi;
  if
  :: ends_turn -> oWP = WP; WP = false
  :: else -> oWP = false
  fi;
  if
  :: enter -> assert(w_in == 0); r++; r_in++
  :: else -> skip
  fi
}

inline wake_turn_end() {
#ifndef MUTANT_TURN_END_NO_WAKE
  if
  :: ends_turn && oWP -> wake(false)   /* leave_queue: if (ends_turn && (s & kWritersParked)) */
  :: else -> skip
  fi
#else
  skip
#endif
}

/* lock_shared() / try_lock_shared_until() */
inline reader_lock(me) {
  /* fast path: (W, readers): 0,n -> 0,n+1 */
  atomic {
    if
    :: !W -> assert(w_in == 0); r++; r_in++; ok = true
    :: else -> ok = false
    fi
  };
  if
  :: !ok ->
     /* acquire_shared_slow: enter if no writer, else queue: (queued): k -> k+1 */
     do
     :: atomic { !W -> assert(w_in == 0); r++; r_in++; ok = true }; break
     :: atomic { W -> k++; queued++; rq[me] = true; in_queue = true }; break
     :: timed && W -> break                                  /* if (d.expired()) return false */
     od;
     if
     :: in_queue ->
        do
        :: atomic { !W -> leave_queue(me, true) };               /* self_admitted */
           in_queue = false; ok = true; wake_turn_end(); break
        :: timed && W ->                                     /* if (d.expired()) */
           /* withdraw_reader(): enter if W cleared meanwhile, else (queued): k -> k-1 */
           atomic {
             if
             :: !W -> leave_queue(me, true); ok = true
             :: else -> leave_queue(me, false); ok = false
             fi
           };
           in_queue = false; wake_turn_end(); break
        :: atomic { W && !S -> S = true }                    /* budget spent: (S): 0 -> 1 */
        :: W && S -> park(me, !W, RP)   /* park(reader_seq_, kReadersParked, reader_may_enter) */
        od
     :: else -> skip
     fi
  :: else -> skip
  fi
}

/* unlock_shared(): fetch_sub; the last reader under a draining writer with WP wakes it. */
inline reader_unlock() {
  atomic { assert(r > 0 && r_in > 0); last_under_wp = (r == 1 && W && WP); r--; r_in-- };
#ifndef MUTANT_NO_WAKE_DRAINED
  if
  :: last_under_wp ->
     /* wake_writers(): (WP): 1 -> 0, wake if it was set */
     atomic { oWP = WP; WP = false };
     if
     :: oWP -> wake(false)
     :: else -> skip
     fi
  :: else -> skip
  fi
#endif
}

proctype reader(byte me; byte iters; byte mode) {
  bool ok, timed, oWP, in_queue, ends_turn, last_under_wp;
  byte i = 0;
  do
  :: i == iters -> break
  :: i < iters ->
     if
     :: mode != 1 -> timed = false
     :: mode != 0 -> timed = true
     fi;
     reader_lock(me);
     if
     :: ok -> reader_unlock()
     :: else -> skip
     fi;
     i++
  od;
  assert(!in_queue && pk[me] == IDLE)
}

#ifdef LIVENESS

/* Liveness: W0 lock() and unlock() forever (the writer that releases and comes straight back),
 * R1 and R2 lock_shared() and unlock_shared() forever; untimed, since a waiter that gives up
 * proves nothing about getting in. */
proctype writer_forever(byte me) {
  bool ok, timed, oRP, oWP, oS;
  do
  :: writer_lock(me); writer_unlock(me)
  od
}

proctype reader_forever(byte me) {
  bool ok, timed, oWP, in_queue, ends_turn, last_under_wp;
  do
  :: reader_lock(me); reader_unlock()
  od
}

ltl turn { [] (rq[2] -> <> !rq[2]) }
ltl drain { [] ((wowner == 1 && w_in == 0) -> <> (w_in == 1)) }

init {
  atomic {
    is_reader[1] = true;
    is_reader[2] = true;
    run writer_forever(0);
    run reader_forever(1);
    run reader_forever(2)
  }
}

#else

/* The word's invariants, checked in every reachable state: this process can move only when
 * one is violated. */
active proctype monitor() {
end:
  atomic {
    !((W == (wowner != 0)) && r == r_in && k == queued && (!S || k > 0) &&
      (!(W && r > 0) || w_in == 0) && r <= N && k <= N && w_in <= 1) ->
    assert(false)
  }
}

init {
  atomic {
#if CONFIG == 1
    is_reader[2] = true;
    run writer(0, 2, 2);
    run writer(1, 1, 1);
    run reader(2, 1, 2)
#else
    is_reader[1] = true;
    is_reader[2] = true;
    run writer(0, 2, 2);
    run reader(1, 2, 1);
    run reader(2, 1, 0)
#endif
  }
}

#endif
