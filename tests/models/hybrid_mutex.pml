/*
 * hybrid_mutex.pml: the park/wake protocol of include/spinwise/hybrid_mutex.hpp, checked
 * exhaustively by SPIN (tests/models/run_models.sh; docs/model-checking.md).
 *
 * The lock word is Drepper's mutex 3 ("Futexes Are Tricky"): 0 free, 1 held, 2 held and a waiter
 * may be parked. Three threads, bounded iterations:
 *   T0  two acquisitions, each lock() or try_lock_until() (chosen by the checker): the holder
 *       that unlocks and barges straight back in through the fast path
 *   T1  one try_lock_until() (timed; its deadline may pass at any point)
 *   T2  one lock() (untimed; only a wake-up gets it out of futex_wait)
 * Every path of every interleaving is explored. spin -DCONFIG=2 gives every thread two
 * acquisitions of either kind (18 M states, ~20 s with pan built -O2, ~1.5 GB; by hand, not
 * in the runner).
 *
 * Checked:
 *   - mutual exclusion: at most one thread between a successful acquisition and its unlock, and
 *     the word is not free while one is there (assertions at the critical section);
 *   - unlock only from a held word (assertion in unlock);
 *   - no lost wake-up: a thread blocked in futex_wait is a thread that has not ended; a state in
 *     which nothing can move while some thread is still asleep is an invalid end state, which
 *     pan reports. With bounded iterations every other thread ends, so such a state is exactly
 *     "asleep on a word nobody will wake" (the word is free or held by nobody who will unlock).
 *
 * Abstractions, and why each is sound:
 *   - Spin budgets and randomized delays (Policy::waiter, the polls of acquire_slow between
 *     park_episodes' rounds, "spin" below): the number of polls is a nondeterministic choice.
 *     A spin either takes a free word with
 *     its CAS 0 -> take, or gives up after a load that saw the word held; the checker tries both wherever both are possible, so
 *     every budget, from zero polls to "spins until it gets in", is covered. A failed CAS or a
 *     poll that changes nothing is a stutter step and is left out.
 *   - The yield before parking (park_episodes::step) and all statistics (wait_meter) change no
 *     shared state: left out.
 *   - futex_wait(word, 2) is the kernel's compare-and-block: one atomic step that blocks the thread
 *     iff word == 2 (asleep[me] = true), else returns at once. futex_wake_one wakes one blocked
 *     thread, chosen nondeterministically (the kernel's queue order is not part of the contract).
 *   - Timeouts: the deadline is not a clock but a nondeterministic choice. A timed waiter may find
 *     its deadline passed at each place the header reads the clock (d.expired() in the spin and
 *     after it, d.park_limit() <= 0 after the exchange), and its futex_wait_for may return
 *     without a wake-up at any time (timeout or a system clock's 10 ms re-read). Returning from a
 *     check as expired ends the call, so the deadline's monotonicity needs no extra state.
 *   - Spurious wake-ups: one per run (SPURIOUS, default 1), usable by any sleeper at any time. A
 *     bound is needed: a sleeper that can always wake by itself would never be stuck, and the
 *     lost-wake-up check would pass vacuously. With one, any sleeper may be woken for no reason
 *     at any point of a run, once (-DSPURIOUS=n for more).
 *   - Memory orders: sequential consistency. Every step that decides who owns the lock is an RMW
 *     on the single word (CAS, exchange), and RMWs on one atomic are totally ordered in every
 *     C++ memory order; the kernel's check in futex_wait reads the same word under the futex
 *     hash-bucket lock. The acquire/release pairs documented in the header (the acquiring CAS or
 *     exchange with unlock's release exchange) only order the protected data around that order,
 *     which is what the tests under TSan check, not this model.
 *
 * The timed path modelled is the fixed one (commit 8f27c17, acquire_slow's `if (d.expired())`
 * branch): a timed waiter that has parked at least once (take == 2: it may have consumed the
 * futex_wake meant for the next sleeper) and then gives up first does exchange(2). If that
 * returns 0 the lock is its own (the call returns true and the thread unlocks later, waking the
 * others); otherwise the word is 2 and the next unlock wakes a sleeper in its place. A waiter
 * that never parked consumed no wake-up and just returns false.
 *
 * spin -DMUTANT_TIMED_NO_REMARK restores the old code (give up without re-marking). SPIN then
 * finds the lost wake-up: T1 and T2 parked; T0 unlocks (2 -> 0) and wakes T1; T0 comes straight
 * back through the fast path (0 -> 1); T1 times out and leaves; T0 unlocks 1 -> 0 and wakes
 * nobody; T2 sleeps forever on a free lock (invalid end state).
 * spin -DMUTANT_UNLOCK_NO_WAKE drops the wake in unlock() and must fail too (any sleeper stays).
 */

#ifndef SPURIOUS
#define SPURIOUS 1
#endif
#ifndef CONFIG
#define CONFIG 1
#endif

#define N 3
#define FREE 0       /* kFree */
#define HELD 1       /* kHeld */
#define CONTENDED 2  /* kContended */

byte word = FREE;      /* word_ */
bool asleep[N];        /* asleep[t]: t is blocked in futex_wait on word_ */
byte in_cs = 0;        /* threads between a successful acquisition and their unlock */
byte spurious = SPURIOUS;

/* detail::futex_wake_one(word_): wakes at most one blocked thread, any of them. */
inline futex_wake_one() {
  atomic {
    if
    :: asleep[0] -> asleep[0] = false
    :: asleep[1] -> asleep[1] = false
    :: asleep[2] -> asleep[2] = false
    :: else -> skip
    fi
  }
}

/* detail::futex_wait(word_, kContended): the kernel blocks iff the word still reads 2. */
inline futex_wait(me) {
  atomic {
    if
    :: word == CONTENDED -> asleep[me] = true
    :: else -> skip
    fi
  }
  if
  :: !asleep[me]                                                  /* woken, or never slept */
  :: atomic { asleep[me] && spurious > 0 -> spurious--; asleep[me] = false }  /* spurious */
  fi
}

/* detail::futex_wait_for(word_, kContended, d.park_limit()): as futex_wait, and it may time out. */
inline futex_wait_for(me) {
  atomic {
    if
    :: word == CONTENDED -> asleep[me] = true
    :: else -> skip
    fi
  }
  if
  :: !asleep[me]                                   /* woken, or never slept */
  :: atomic { asleep[me] -> asleep[me] = false }   /* timed out (or spurious) */
  fi
}

/* try_acquire(): CAS 0 -> 1, the fast path of lock() and try_lock_until() (barging). */
inline try_acquire() {
  atomic {
    if
    :: word == FREE -> word = HELD; ok = true
    :: else -> ok = false
    fi
  }
}

/* acquire_slow(detail::no_deadline): lock()'s wait */
inline lock_slow(me) {
  take = HELD;
  do
  :: atomic { word == FREE -> word = take }; break  /* spin: CAS 0 -> take */
  :: word != FREE ->                                 /* spin: budget spent on a held word */
     /* the yield; then exchange(kContended): 1 -> 2 (announce a sleeper), or 0 -> 2 (ours) */
     atomic { old = word; word = CONTENDED };
     if
     :: old == FREE -> break
     :: else ->
        futex_wait(me);     /* futex_wait(word_, kContended) */
        take = CONTENDED    /* others may sleep behind us: our unlock must wake */
     fi
  od;
  ok = true
}

/* acquire_slow, if (d.expired()): return false, after re-marking the word if we parked (the fix:
 * take == kContended && exchange(kContended) == kFree keeps the lock). */
inline give_up() {
#ifdef MUTANT_TIMED_NO_REMARK
  ok = false
#else
  if
  :: take == CONTENDED ->
     /* exchange(kContended): x -> 2; 0 means the lock was free: it is ours (as 2) */
     atomic { old = word; word = CONTENDED };
     ok = (old == FREE)
  :: else -> ok = false   /* never parked, so consumed no wake-up */
  fi
#endif
}

/* acquire_slow(detail::clock_deadline): try_lock_until()'s wait */
inline lock_slow_until(me) {
  take = HELD;
  do
  :: atomic { word == FREE -> word = take }; ok = true; break  /* spin: CAS 0 -> take */
  :: word != FREE ->                  /* spin: budget spent, or expired(), on a held word */
     if
     :: true -> give_up(); break      /* if (d.expired()): re-mark if we slept, return false */
     :: true ->                       /* not yet */
        /* the yield; exchange(kContended), as in acquire_slow */
        atomic { old = word; word = CONTENDED };
        if
        :: old == FREE -> ok = true; break
        :: else ->
           if
           :: true -> ok = false; break  /* park_limit() <= 0: the exchange above re-marked it */
           :: true -> futex_wait_for(me);  /* futex_wait_for(word_, kContended, limit) */
              take = CONTENDED
           fi
        fi
     fi
  od
}

/* unlock(): exchange(kFree), futex_wake_one when it was 2. */
inline unlock() {
  atomic { old = word; word = FREE; assert(old != FREE) };
#ifndef MUTANT_UNLOCK_NO_WAKE
  if
  :: old == CONTENDED -> futex_wake_one()
  :: else -> skip
  fi
#endif
}

inline critical_section() {
  atomic { in_cs++; assert(in_cs == 1 && word != FREE) };
  in_cs--
}

/* mode: 0 untimed lock(), 1 timed try_lock_until(), 2 either, chosen per acquisition */
proctype thread(byte me; byte iters; byte mode) {
  byte take, old, i = 0;
  bool ok, timed;
  do
  :: i == iters -> break
  :: i < iters ->
     if
     :: mode != 1 -> timed = false
     :: mode != 0 -> timed = true
     fi;
     try_acquire();
     if
     :: !ok && !timed -> lock_slow(me)
     :: !ok && timed -> lock_slow_until(me)
     :: else -> skip
     fi;
     if
     :: ok -> critical_section(); unlock()
     :: else -> skip
     fi;
     i++
  od
}

init {
  atomic {
#if CONFIG == 2
    run thread(0, 2, 2);
    run thread(1, 2, 2);
    run thread(2, 2, 2)
#else
    run thread(0, 2, 2);
    run thread(1, 1, 1);
    run thread(2, 1, 0)
#endif
  }
}
