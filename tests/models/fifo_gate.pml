/*
 * fifo_gate.pml: the FIFO gate of include/spinwise/detail/fifo_gate.hpp (the ownership word and
 * heartbeat of the FIFO locks), driven by the ticket queue of include/spinwise/ticket_mutex.hpp,
 * checked exhaustively by SPIN (tests/models/run_models.sh; docs/model-checking.md).
 *
 * Which lock: ticket_mutex. Its queue is two counters (next ticket, head ticket), which the
 * model keeps as they are. mcs_mutex drives the same gate with the same calls in the same order
 * (lock() and try_lock(): queue_empty() && try_take_free(); acquire_slow() (fifo_gate::wait): the same loop over
 * queue_open() and barge(); queued(): wait to be the head, head_wait(), then pass the queue on;
 * unlock(): release(queue_empty())); only the queue differs, and the gate sees of a queue just
 * "empty or not" and "who is its head". MCS's queue is empty while tail_ is null, its head is the
 * node with head == 1, and its head passes the queue on after taking the lock (promotes its
 * successor, or CASes tail_ back to null), as ticket's head moves the head ticket on: the same
 * three facts at the same points. The MCS-only steps (the link store behind an exchange,
 * wait_for_link) happen inside the queue and touch neither held_ nor beat_.
 *
 * The gate: held_ 0 free, 1 held, 2 free but reserved for the queue's head; beat_ the head's
 * heartbeat (0: none). ticket_mutex's slots: even_beat_ and odd_beat_, the beats of the waiters
 * one and two places behind the head. (mcs_mutex keeps each waiter's beat in its own node and
 * hands on its successor's; the same facts at the same points, exact at every place.) Three
 * threads, bounded:
 *   T0, T1  two calls each, each lock() or try_lock() (chosen by the checker)
 *   T2      two lock() calls
 * Two variants: default (patience > 0) and -DSTRICT (patience 0: head_stale() is always false,
 * head_beat() and the vouches do nothing).
 *
 * Checked:
 *   - mutual exclusion: a count of the threads between their acquiring step and their release
 *     store, asserted to be 1 at each entry;
 *   - the word in every reachable state (the monitor): held_ == 1 exactly while one thread is
 *     inside; a reservation only while the queue is not empty (a reservation with nobody to take
 *     it would fail every try_lock() forever); in the default variant, a reservation only while
 *     beat_ != 0 (release() reserves only for a head that has polled, and only the holder clears
 *     beat_);
 *   - no waiter stranded: every wait is a poll loop, modelled as a blocking guard enabled exactly
 *     when some poll would get the thread out of it. A state where nothing can move and some
 *     thread has not ended is an invalid end state, which pan reports: a queued thread whose
 *     turn never comes, a head waiting on a lock nobody will let go, a thread outside the queue
 *     waiting on a lock held by nobody;
 *   - order (STRICT, or -DORDER on the default variant): a thread that took its ticket before
 *     another thread's lock() or try_lock() call began (or before that thread took its own
 *     ticket) enters first. Ghost state: waiting = the threads that hold a ticket and have not
 *     taken the lock; before[t] = those of them that were waiting when t's call began or when t
 *     took its ticket, less those that entered since; t's entry asserts before[t] is empty. A call
 *     that read the queue empty before a ticket was taken may still enter first: its doorway (read
 *     the queue, CAS the word) overlapped the ticket, as FCFS allows.
 *
 * The default variant claims order only while every thread runs, checked with -DORDER
 * -DFRESH_WHEN_STAMPED (a head with a beat always looks fresh: every thread has its CPU). A new
 * head is never without a beat: an arrival into an empty queue stamps beat_ before its CAS makes
 * its ticket visible, and the waiters one and two places behind the head stamp a word each
 * (slot[ticket % 2], tagged with the ticket), which the head that takes the lock copies into beat_
 * for its successor once its advance has shown that there is one (the advance's acquire reads
 * past the successor's CAS, and so past its stamp; copied before it, the model found a successor
 * that stamped and queued between the copy and the advance, with no beat). Without either (the two mutants below) beat_ is 0 between
 * a new head's designation and its first poll, a release there frees the lock and the releaser
 * barges back in: the overtaking the review measured. With more threads than the model has, a
 * waiter three or more places back that moves up to second place has stamped nothing yet: the
 * header says so (fifo_gate.hpp); with three threads no waiter is ever more than two places back.
 *
 * Abstractions, and why each is sound:
 *   - The clock. head_stale() is a nondeterministic choice wherever the header calls it: stale or
 *     fresh while beat_ != 0 (the head may have been descheduled for any time since it last
 *     polled, or be polling now), always stale while beat_ == 0 (as the header says), never
 *     stale in the strict variant. beat_ is a bit (0 or a stamp): head_beat() after the first
 *     stamps nothing new the model could see, since freshness is a choice anyway. Every value the
 *     real clock could give is covered, so exclusion and the absence of stranding hold for every
 *     patience and every schedule. (Exclusion never reads the clock, as the header says.) So the
 *     longer patience of a head whose beat carries kAlone (its thread has its CPU to itself) is
 *     one more clock value the choice covers, not a step of its own: the protocol's steps and
 *     their order are the same with or without it.
 *   - Poll loops are blocking guards (as in spin_shared_mutex.pml): the queued waiter's
 *     `while (ticket != head) yield` is `qhead == ticket`; head_wait()'s loop is one step
 *     `held != HELD -> held = HELD` (head_try_take's load and CAS from the value read: under
 *     sequential consistency a CAS that succeeds finds the word as read, and a failing one changes
 *     nothing); barge()'s loop leaves when barger_try_take succeeds, when the queue is empty or
 *     when the head looks fresh, each at the instant of the read that shows it; one guarded step
 *     per exit. barger_try_take's heartbeat check and CAS are two reads apart in the header; here
 *     it takes a reservation whenever the head may look stale at the CAS, which covers every
 *     interleaving of the two (a reservation implies beat_ != 0, checked by the monitor, so a
 *     stale reading is always possible then). Snoozes, yields, spin budgets: no lock state.
 *   - Steps on different atomics are separate steps, as in the header: queue_empty() and the CAS
 *     of try_take_free(); queue_open()'s queue read, its heartbeat read, and the fetch_add that
 *     takes the ticket; release()'s queue read and its store (its heartbeat read is merged into
 *     the store: only the holder, which is the releaser, vouches with a 0, so a fresh reading stays
 *     possible until the store, and a stale one is always possible). The enqueue is the header's
 *     CAS loop: one atomic read of the queue word, the stamps for the place it shows, the CAS.
 *   - The 2^32 wrap of the tickets (tested in C++) is not modelled: there are at most six.
 *   - Memory orders: sequential consistency. Exclusion is held_ alone (acquire CAS, release
 *     store), totally ordered as RMWs and stores on one atomic. The relaxed reads of the queue
 *     and of beat_ get the latest value here; in C++ they may get an older one, bounded by the
 *     happens-before that held_'s release/acquire chain gives (docs/model-checking.md: not
 *     checked, argued). The header's cross-variable
 *     orderings (a place stamp before the CAS that queues it, read by the head's acquire advance;
 *     the last head's stamps before its advance, read by an arrival's acquire load of the queue)
 *     are message passing, trivially true under SC; they affect only the order of the default
 *     variant.
 *   - Statistics, TSan hooks, the wait meter: no lock state; left out.
 *   - Timed calls: a thread that took a ticket cannot give it back, so ticket_mutex's and
 *     mcs_mutex's timed calls take none and poll try_lock() until the deadline; no thread here
 *     gives up, except try_lock(), which takes no ticket.
 *
 * Mutants that must fail (the runner checks all six):
 *   -DMUTANT_HEAD_TAKES_HELD            head_try_take() without `h != kHeld`: its CAS 1 -> 1
 *                                       succeeds (assertion violated: exclusion)
 *   -DMUTANT_HEAD_WAITS_FOR_RESERVATION head_try_take() takes only a reservation, not a free
 *                                       lock (invalid end state: a head stranded on a free lock)
 *   -DSTRICT -DMUTANT_STRICT_READS_CLOCK head_stale() without its kStrict branch: with no stamps
 *                                       in the strict variant every head looks stale, arrivals
 *                                       barge (assertion violated: order)
 *   -DSTRICT -DMUTANT_TRYLOCK_IGNORES_QUEUE try_lock() = try_take_free() alone, without
 *                                       queue_empty() (assertion violated: order)
 *   -DORDER -DFRESH_WHEN_STAMPED -DMUTANT_NO_SUCCESSOR_BEAT  the head that takes the lock leaves
 *                                       beat_ at 0 and does not vouch for its successor (the old
 *                                       head_passed()): a release before the successor's first
 *                                       poll frees the lock (assertion violated: order)
 *   -DORDER -DFRESH_WHEN_STAMPED -DMUTANT_NO_ARRIVAL_VOUCH  an arrival into an empty queue does not
 *                                       stamp beat_ (assertion violated: order)
 * And one for use by hand, which must pass: -DSTRICT -DMUTANT_RELEASE_FREES (release() always
 * frees): in the strict variant only a call that read the queue empty can take a free lock, so
 * the reservation changes no FCFS order (docs/model-checking.md).
 */

#define N 3
#define FREE 0      /* kFree */
#define HELD 1      /* kHeld */
#define RESERVED 2  /* kReserved */

#if defined(STRICT) && !defined(MUTANT_STRICT_READS_CLOCK)
#define MAY_LOOK_STALE false   /* head_stale(): kStrict */
#define MAY_LOOK_FRESH true
#elif defined(STRICT) || defined(FRESH_WHEN_STAMPED)
#define MAY_LOOK_STALE (!beat) /* b == 0: stale; else fresh (strict: nobody stamps) */
#define MAY_LOOK_FRESH beat
#else
#define MAY_LOOK_STALE true    /* b == 0: stale; else either, by the clock */
#define MAY_LOOK_FRESH beat
#endif

#if defined(STRICT) && !defined(ORDER)
#define ORDER
#endif

byte held = FREE;  /* held_ */
bool beat;         /* beat_ != 0 */
byte slot[2];      /* ticket_mutex's even_beat_ / odd_beat_: 0 none, else the stamping ticket + 1 */
byte next, qhead;  /* queue_: next ticket to hand out, ticket at the head */

/* Ghost state for the checks. */
byte in_cs;        /* threads between their acquiring step and their release store */
#ifdef ORDER
byte waiting;      /* bit t: thread t holds a ticket and has not taken the lock */
byte before[N];    /* bit u of before[t]: u was waiting when t began its call or took its ticket */
#endif

/* head_stale(), at one instant. */
inline head_stale() {
  if
  :: MAY_LOOK_STALE -> stale = true
  :: MAY_LOOK_FRESH -> stale = false
  fi
}

/* The acquiring step's ghost update; inside the atomic step of the successful CAS. */
inline enter(me) {
  in_cs++;
  assert(in_cs == 1);
#ifdef ORDER
  assert(before[me] == 0);   /* nobody who queued before we arrived is still waiting */
  waiting = waiting & ~(1 << me);
  before[0] = before[0] & ~(1 << me);
  before[1] = before[1] & ~(1 << me);
  before[2] = before[2] & ~(1 << me)
#endif
}

/* A lock() or try_lock() call begins. */
inline arrive(me) {
#ifdef ORDER
  before[me] = waiting
#else
  skip
#endif
}

/* queue_empty() && gate_.try_take_free(): a load of queue_, then CAS held_ 0 -> 1. */
inline take_free_if_queue_empty(me) {
  qe = (next == qhead);
  if
  :: qe ->
     atomic {
       if
       :: held == FREE -> held = HELD; enter(me); ok = true
       :: held != FREE -> ok = false
       fi
     }
  :: !qe -> ok = false
  fi
}

/* ticket_mutex::show_running(t, place) */
inline show_running(t, place) {
#ifndef STRICT
  if
#ifndef MUTANT_NO_ARRIVAL_VOUCH
  :: place == 0 -> beat = true              /* gate_.vouch(beat_now()) */
#endif
  :: place == 1 || place == 2 -> slot[t % 2] = t + 1
  :: else -> skip
  fi
#else
  skip
#endif
}

/* ticket_mutex::queued(): take a ticket (the CAS loop), wait for our turn, head_wait(), vouch for
 * the successor, pass the queue on. */
inline queued(me) {
  enq = false;
  do
  :: !enq ->
     atomic { t = next; h = qhead };   /* q = queue_.load(acquire) (or the failed CAS's value) */
     show_running(t, t - h);
     atomic {                          /* CAS q -> q + kTicketOne */
       if
       :: next == t && qhead == h ->
          ticket = t; next++; enq = true;
#ifdef ORDER
          before[me] = waiting;
          waiting = waiting | (1 << me)
#else
          skip
#endif
       :: else -> skip
       fi
     }
  :: enq -> break
  od;
  /* while (place != 0) { stamp when due; yield } (one stamp a place: freshness is a choice) */
  do
  :: qhead == ticket -> break
#ifndef STRICT
  :: (ticket - qhead == 1 || ticket - qhead == 2) && slot[ticket % 2] != ticket + 1 ->
     slot[ticket % 2] = ticket + 1
#endif
  od;
  /* gate_.head_wait(): head_beat() stamps first (last = 0: due at once) */
#ifndef STRICT
  beat = true;
#endif
  /* then head_try_take(), polled until it succeeds: h = held_; h != kHeld && CAS h -> kHeld */
#if defined(MUTANT_HEAD_TAKES_HELD)
  atomic { held = HELD; enter(me) };
#elif defined(MUTANT_HEAD_WAITS_FOR_RESERVATION)
  atomic { held == RESERVED -> held = HELD; enter(me) };
#else
  atomic { held != HELD -> held = HELD; enter(me) };
#endif
#ifndef STRICT
  beat = false;   /* head_wait()'s vouch(0) once it holds the lock */
#endif
  /* q = queue_.fetch_add(1, acq_rel): (next, head) -> (next, head + 1) */
  atomic { succ = (next != ticket + 1); qhead++ };
  /* if (next_of(q) != ticket + 1) gate_.vouch(beat_if_tagged(place_beat(ticket + 1), ticket + 1)):
   * after the advance, whose acquire reads past the successor's CAS, so its place stamp is seen */
#if !defined(STRICT) && !defined(MUTANT_NO_SUCCESSOR_BEAT)
  if
  :: succ -> beat = (slot[(ticket + 1) % 2] == ticket + 2)
  :: else -> skip
  fi
#else
  skip
#endif
}

/* fifo_gate::barge(): true with the lock, false to look at the queue again. */
inline barge(me) {
  do
  :: atomic {   /* barger_try_take(): a free lock, or one reserved for a head that looks stale */
       held == FREE || (held == RESERVED && MAY_LOOK_STALE) -> held = HELD; enter(me)
     };
     ok = true; break
  :: next == qhead -> ok = false; break   /* if (queue_empty()) return false; */
  :: MAY_LOOK_FRESH -> ok = false; break  /* if (!head_stale()) return false; */
  od
}

/* ticket_mutex's acquire_slow(): fifo_gate::wait */
inline lock_slow(me) {
  do
  :: true ->
     take_free_if_queue_empty(me);
     if
     :: ok -> break
     :: !ok -> skip
     fi;
     /* gate_.queue_open(queue_empty()): queue_empty || !head_stale() */
     qe = (next == qhead);
     if
     :: qe -> stale = false
     :: !qe -> head_stale()
     fi;
     if
     :: !stale ->
        queued(me);
        ok = true;
        break
     :: stale ->
        barge(me);
        if
        :: ok -> break
        :: !ok -> skip
        fi
     fi
  od
}

/* lock(): queue_empty() && try_take_free(), else acquire_slow(). */
inline lock(me) {
  arrive(me);
  take_free_if_queue_empty(me);
  if
  :: !ok -> lock_slow(me)
  :: ok -> skip
  fi
}

/* try_lock(): queue_empty() && try_take_free() (a queued waiter keeps its turn). */
inline try_lock(me) {
  arrive(me);
#ifdef MUTANT_TRYLOCK_IGNORES_QUEUE
  atomic {
    if
    :: held == FREE -> held = HELD; enter(me); ok = true
    :: held != FREE -> ok = false
    fi
  }
#else
  take_free_if_queue_empty(me)
#endif
}

/* unlock(): gate_.release(queue_empty()):
 *   held_ = queue_empty || head_stale() ? kFree : kReserved */
inline unlock(me) {
  qe = (next == qhead);
  atomic {
    assert(held == HELD && in_cs == 1);
    if
    :: qe -> stale = true
    :: !qe -> head_stale()
    fi;
#ifdef MUTANT_RELEASE_FREES
    held = FREE;
#else
    if
    :: stale -> held = FREE
    :: !stale -> held = RESERVED
    fi;
#endif
    in_cs--
  }
}

/* tries: 0 lock() only; 1 lock() or try_lock(), chosen per call */
proctype thread(byte me; byte iters; bool tries) {
  byte i = 0, ticket, t, h;
  bool ok, qe, stale, enq, succ;
  do
  :: i == iters -> break
  :: i < iters ->
     if
     :: true -> lock(me)
     :: tries -> try_lock(me)
     fi;
     if
     :: ok -> unlock(me)
     :: !ok -> skip
     fi;
     i++
  od;
#ifdef ORDER
  assert((waiting & (1 << me)) == 0)
#endif
}

/* The word's invariants, checked in every reachable state: this process can move only when
 * one is violated. */
active proctype monitor() {
end:
  atomic {
    !((held == HELD) == (in_cs == 1) && in_cs <= 1 &&
      (held != RESERVED || next != qhead)
#if !defined(STRICT)
      && (held != RESERVED || beat)
#endif
     ) ->
    assert(false)
  }
}

init {
  atomic {
    run thread(0, 2, true);
    run thread(1, 2, true);
    run thread(2, 2, false)
  }
}
