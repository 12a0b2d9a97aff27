/*
 * sx_lock.pml: the S/SX/X modes, the X reservation and drain, upgrade/downgrade and the park/wake
 * protocol of include/spinwise/sx_lock.hpp (its sleep protocol: detail/futex_park.hpp), checked
 * exhaustively by SPIN
 * (tests/models/run_models.sh; docs/model-checking.md).
 *
 * Lock word state_ (32 bits): X (bit 0), SX (bit 1), P (bit 2: a thread may sleep on epoch_),
 * S holders (bits 3..31); one futex sequence word epoch_ for every sleeper.
 *
 * Three threads, bounded iterations (T0 two acquisitions, T1 and T2 one each). For every
 * acquisition the checker picks the mode:
 *   S   lock_shared, unlock_shared
 *   SX  lock_sx, then unlock_sx, or upgrade() to X and then unlock() or downgrade() back to SX
 *       and unlock_sx()
 *   X   lock, then unlock(), or downgrade() to SX and unlock_sx()
 * so every pair and triple of modes meets, including an X request reserving the latch while S
 * holders are inside and the last S holder leaving under it, an upgrade draining S holders,
 * and a downgrade letting sleeping S requests in.
 *
 * Checked:
 *   - compatibility (the table at the file top): S enters only with no X holder; SX only with no
 *     X and no SX holder; X (by lock() or by upgrade()) only with no S, SX or X holder
 *     (assertions at each entry);
 *   - the word in every reachable state (the monitor process): not (X and SX); X exactly while a
 *     thread holds X or an X reservation (lock() or upgrade() draining); SX exactly while a
 *     thread holds SX; the S count equals the S holders; X with S holders > 0 only before the X
 *     holder enters; at most one X and one SX holder;
 *   - no lost wake-up: a sleeping thread has not ended; a state where nothing can move while some
 *     thread sleeps (or waits on a condition nobody will make true) is an invalid end state,
 *     which pan reports.
 *
 * Abstractions, and why each is sound:
 *   - Each RMW on state_ (CAS, fetch_and, fetch_sub, fetch_xor) is one atomic step on the fields.
 *     waiting::until() followed by the CAS that enters (acquire_shared_slow, acquire_sx_slow,
 *     acquire_slow) is one step that takes the word if it is ready: a successful CAS on the value
 *     the load returned has the effect of load-and-CAS at its own instant under sequential
 *     consistency, and a failing CAS changes nothing and loops.
 *   - Spin budgets, randomized delays, the yield (park_episodes::pause): nondeterministic; a
 *     waiter retries (is not scheduled) or parks, at any point.
 *   - epoch_ is not a counter here: each thread has a park state pk[]: IDLE, FRESH (e =
 *     epoch_.load), STALE (epoch_ bumped since), ASLEEP. wake()'s fetch_add turns FRESH into
 *     STALE; futex_wait(epoch_, e) sleeps iff still FRESH (the kernel's epoch_ == e check under
 *     its lock), else returns at once; futex_wake_all wakes every sleeper. Exact while epoch_
 *     does not wrap between one thread's load and its futex_wait (2^32 bumps), as the header
 *     assumes.
 *   - Spurious wake-ups: one per run (SPURIOUS, default 1), for any sleeper; bounded so the
 *     lost-wake-up check is not vacuous. The latch has no timed calls.
 *   - Memory orders: sequential consistency. All decisions are RMWs on the one word, totally
 *     ordered in C++; the sleep protocol's one cross-variable step (the sleeper's acquire load of
 *     epoch_ against the waker's release bump, after the waker's acq_rel clear of P) is the
 *     message-passing pattern the header documents per operation, trivially true under SC.
 *   - TSan annotations and statistics change no lock state: left out.
 *
 * Mutants that must fail (the runner checks the first):
 *   -DMUTANT_NO_WAKE_DRAINED    unlock_shared() never wakes the draining X request
 *   -DMUTANT_UNLOCK_NO_WAKE     unlock() clears P but wakes nobody
 *   -DMUTANT_DOWNGRADE_NO_WAKE  downgrade() clears P but wakes nobody
 */

#ifndef SPURIOUS
#define SPURIOUS 1
#endif

#define N 3

bool X, SX, P;   /* state_ bits 0..2 */
byte n;          /* S holders inside */

#define IDLE 0
#define FRESH 1
#define STALE 2
#define ASLEEP 3
byte pk[N];
byte spurious = SPURIOUS;

/* Ghost state for the checks. */
byte xowner;             /* 1 + the thread holding X or an X reservation, 0 none */
byte s_in, sx_in, x_in;  /* holders in each mode */

/* wake() = detail::wake_sleepers(epoch_): epoch_.fetch_add(1) (one step), futex_wake_all(epoch_)
 * (another). */
inline wake() {
  atomic {
    if :: pk[0] == FRESH -> pk[0] = STALE :: else -> skip fi;
    if :: pk[1] == FRESH -> pk[1] = STALE :: else -> skip fi;
    if :: pk[2] == FRESH -> pk[2] = STALE :: else -> skip fi
  };
  atomic {
    if :: pk[0] == ASLEEP -> pk[0] = IDLE :: else -> skip fi;
    if :: pk[1] == ASLEEP -> pk[1] = IDLE :: else -> skip fi;
    if :: pk[2] == ASLEEP -> pk[2] = IDLE :: else -> skip fi
  }
}

/* park(ready) = detail::park (futex_park.hpp) with P and epoch_: e = epoch_.load; re-read the
 * word: return if ready, else CAS P in unless set; futex_wait(epoch_, e). */
inline park(me, READY) {
  pk[me] = FRESH;
  atomic {
    if
    :: READY -> pk[me] = IDLE
    :: else -> P = true
    fi
  }
  if
  :: pk[me] == FRESH || pk[me] == STALE ->
     atomic {
       if
       :: pk[me] == FRESH -> pk[me] = ASLEEP   /* epoch_ == e: the kernel sleeps */
       :: else -> pk[me] = IDLE                /* epoch_ != e: returns at once */
       fi
     }
     if
     :: pk[me] != ASLEEP                                                     /* woken */
     :: atomic { pk[me] == ASLEEP && spurious > 0 -> spurious--; pk[me] = IDLE }  /* spurious */
     fi
  :: else -> skip
  fi
}

/* Entering each mode, with the compatibility table's checks. */
inline enter_s()  { assert(x_in == 0); n++; s_in++ }
inline enter_sx() { assert(x_in == 0 && sx_in == 0); SX = true; sx_in++ }
inline enter_x()  { assert(x_in == 0 && sx_in == 0 && s_in == 0 && n == 0); x_in++ }

/* The reserved X request (acquire_slow or upgrade) waits for the S holders: until(drained). */
inline drain(me) {
  do
  :: atomic { n == 0 -> enter_x() }; break
  :: n > 0 -> park(me, n == 0)
  od
}

/* lock(): CAS 0 -> X; else acquire_slow(): until(no_x_sx), CAS (X): 0 -> 1 (reserve), drain. */
inline lock_x(me) {
  atomic {
    if
    :: !X && !SX && !P && n == 0 -> X = true; xowner = me + 1; enter_x(); need_drain = false
    :: else -> need_drain = true   /* not entered yet: the slow path */
    fi
  };
  if
  :: need_drain ->
     do
     :: atomic {
          !X && !SX -> X = true; xowner = me + 1;
          if
          :: n == 0 -> enter_x(); need_drain = false
          :: else -> skip
          fi
        };
        break
     :: (X || SX) -> park(me, !X && !SX)
     od;
     if
     :: need_drain -> drain(me)
     :: else -> skip
     fi
  :: else -> skip
  fi
}

/* unlock(): fetch_and(~(X | P)); wake if P was set. */
inline unlock_x(me) {
  atomic { assert(X && xowner == me + 1 && x_in == 1); oP = P; X = false; P = false; xowner = 0; x_in-- };
#ifndef MUTANT_UNLOCK_NO_WAKE
  if
  :: oP -> wake()
  :: else -> skip
  fi
#else
  skip
#endif
}

/* lock_shared(): CAS n -> n+1 unless X; acquire_shared_slow(): until(no_x), the same CAS. */
inline lock_s(me) {
  do
  :: atomic { !X -> enter_s() }; break
  :: X -> park(me, !X)
  od
}

/* unlock_shared(): fetch_sub; the last S holder under X with P set: wake_drained(). */
inline unlock_s() {
  atomic { assert(n > 0 && s_in > 0); last = (n == 1 && X && P); n--; s_in-- };
#ifndef MUTANT_NO_WAKE_DRAINED
  if
  :: last ->
     atomic { oP = P; P = false };   /* wake_drained(): fetch_and(~P) */
     if
     :: oP -> wake()
     :: else -> skip
     fi
  :: else -> skip
  fi
#else
  skip
#endif
}

/* lock_sx(): CAS (X, SX): 0,0 -> 0,1; acquire_sx_slow(): until(no_x_sx), the same CAS. */
inline lock_sx(me) {
  do
  :: atomic { !X && !SX -> enter_sx() }; break
  :: (X || SX) -> park(me, !X && !SX)
  od
}

/* unlock_sx(): fetch_and(~(SX | P)); wake if P was set. */
inline unlock_sx() {
  atomic { assert(SX && sx_in == 1); oP = P; SX = false; P = false; sx_in-- };
  if
  :: oP -> wake()
  :: else -> skip
  fi
}

/* upgrade(): fetch_xor(X | SX): (X, SX) 0,1 -> 1,0; drain() if S holders were inside. */
inline upgrade(me) {
  atomic {
    assert(SX && !X && sx_in == 1);
    SX = false; sx_in--; X = true; xowner = me + 1;
    if
    :: n == 0 -> enter_x(); need_drain = false
    :: else -> need_drain = true
    fi
  };
  if
  :: need_drain -> drain(me)
  :: else -> skip
  fi
}

/* downgrade(): CAS (X, SX, P): 1,0,p -> 0,1,0; wake if P was set. */
inline downgrade(me) {
  atomic {
    assert(X && xowner == me + 1 && x_in == 1);
    oP = P; X = false; P = false; xowner = 0; x_in--;
    enter_sx()
  };
#ifndef MUTANT_DOWNGRADE_NO_WAKE
  if
  :: oP -> wake()
  :: else -> skip
  fi
#else
  skip
#endif
}

proctype thread(byte me; byte iters) {
  bool oP, last, need_drain;
  byte i = 0, mode;
  do
  :: i == iters -> break
  :: i < iters ->
     if
     :: mode = 0   /* S */
     :: mode = 1   /* SX */
     :: mode = 2   /* X */
     fi;
     if
     :: mode == 0 -> lock_s(me); unlock_s()
     :: mode == 1 -> lock_sx(me);
        if
        :: unlock_sx()
        :: upgrade(me);
           if
           :: unlock_x(me)
           :: downgrade(me); unlock_sx()
           fi
        fi
     :: mode == 2 -> lock_x(me);
        if
        :: unlock_x(me)
        :: downgrade(me); unlock_sx()
        fi
     fi;
     i++
  od;
  assert(xowner != me + 1 && pk[me] == IDLE)
}

/* The word's invariants, checked in every reachable state: this process can move only when
 * one is violated. */
active proctype monitor() {
end:
  atomic {
    !(!(X && SX) && X == (xowner != 0) && SX == (sx_in == 1) && n == s_in &&
      (!(X && n > 0) || x_in == 0) && x_in <= 1 && sx_in <= 1 && n <= N) ->
    assert(false)
  }
}

init {
  atomic {
    run thread(0, 2);
    run thread(1, 1);
    run thread(2, 1)
  }
}
