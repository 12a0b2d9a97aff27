/* spinwise's C API (spinwise::c, pkg-config spinwise-c): the C++ locks, knobs, profiles and
 * statistics for C99 and C++ programs, through src/c/c_api.cpp. The manual: docs/c-api.md.
 *
 * Every call returns 0 or an errno value (EINVAL, EBUSY, ETIMEDOUT, EPERM, EAGAIN, ENOMEM, ...,
 * spinwise_strerror names it) and never aborts, also from a pthread key destructor at thread exit:
 * a NULL argument, an unknown kind or a tv_nsec outside [0, 1e9) is EINVAL and changes nothing.
 * No exception crosses this boundary.
 *
 * A lock object is a fixed-size opaque struct whose all-zero state is a valid unlocked lock of the
 * default kind (hybrid), so the static initializers need no init call and no allocation:
 *
 *   static spinwise_mutex_t m = SPINWISE_MUTEX_INITIALIZER;
 *   spinwise_mutex_lock(&m); ... spinwise_mutex_unlock(&m);
 *
 * Lock objects must not be copied or moved while in use (a lock's address is its identity). */
#ifndef SPINWISE_SPINWISE_H
#define SPINWISE_SPINWISE_H

#include <stddef.h>

#include "spinwise/version.h" /* SPINWISE_VERSION, _MAJOR, _MINOR, _PATCH, _STRING */

#ifdef __cplusplus
extern "C" {
#endif

/* Only a pointer is taken: a C99 program that fills one defines _POSIX_C_SOURCE (time.h). */
struct timespec;

/* Bytes of a mutex or rwlock object: a kind byte, then the C++ lock (the largest, ticket_mutex,
 * takes 40). Fixed for the ABI; src/c/c_lock_object.hpp's fits() checks a kind's size and
 * alignment, and src/c/c_api.cpp (mutexes) and src/c/c_rwlock.cpp (rwlocks) static_assert it
 * for every kind they serve. */
#define SPINWISE_LOCK_BYTES 64

/* The lock types are 8-byte aligned on every target: the union's members are not enough on i386,
 * whose ABI aligns long long and double to 4 inside a struct, so the compiler is told. */
#if defined(__GNUC__) || defined(__clang__)
#define SPINWISE_ALIGNED_8 __attribute__((aligned(8)))
#elif defined(__cplusplus)
#define SPINWISE_ALIGNED_8 alignas(8)
#elif defined(_MSC_VER)
#define SPINWISE_ALIGNED_8 __declspec(align(8))
#else
#define SPINWISE_ALIGNED_8 /* the union's members: 8 wherever the ABI aligns them so */
#endif

/* Opaque: use only through the calls below. */
typedef struct SPINWISE_ALIGNED_8 spinwise_mutex {
  union {
    unsigned char bytes[SPINWISE_LOCK_BYTES];
    long long align_ll;
    void* align_p;
    double align_d;
  } opaque_;
} spinwise_mutex_t;

typedef struct SPINWISE_ALIGNED_8 spinwise_rwlock {
  union {
    unsigned char bytes[SPINWISE_LOCK_BYTES];
    long long align_ll;
    void* align_p;
    double align_d;
  } opaque_;
} spinwise_rwlock_t;

/* A mutex (of any kind) with an owner and a depth: its owner may lock it again. */
typedef struct SPINWISE_ALIGNED_8 spinwise_recursive_mutex {
  spinwise_mutex_t mutex_;
  union {
    unsigned char bytes[16];
    long long align_ll;
    void* align_p;
  } owner_;
} spinwise_recursive_mutex_t;

/* All zero: an unlocked hybrid mutex / rwlock, an unowned recursive hybrid mutex. */
/* clang-format off */
#define SPINWISE_MUTEX_INITIALIZER {{{0}}}
#define SPINWISE_RWLOCK_INITIALIZER {{{0}}}
#define SPINWISE_RECURSIVE_MUTEX_INITIALIZER {{{{0}}}, {{0}}}
/* clang-format on */

/* Mutex kinds; the names spinwise_mutex_init_kind takes are in quotes. */
typedef enum spinwise_mutex_kind {
  SPINWISE_MUTEX_HYBRID = 0,   /* "hybrid": hybrid_mutex, spin then park (the default) */
  SPINWISE_MUTEX_ADAPTIVE = 1, /* "adaptive": hybrid_mutex with adaptive_policy */
  SPINWISE_MUTEX_TAS = 2,      /* "tas": tas_mutex */
  SPINWISE_MUTEX_TTAS = 3,     /* "ttas": ttas_mutex */
  SPINWISE_MUTEX_TICKET = 4,   /* "ticket": ticket_mutex (FIFO) */
  SPINWISE_MUTEX_MCS = 5       /* "mcs": mcs_mutex (FIFO queue lock) */
} spinwise_mutex_kind;

typedef enum spinwise_rwlock_kind {
  SPINWISE_RWLOCK_HYBRID = 0, /* "hybrid": hybrid_shared_mutex, spin then park (the default) */
  SPINWISE_RWLOCK_SPIN = 1    /* "spin": spin_shared_mutex, spin then yield */
} spinwise_rwlock_kind;

/* --- mutex -------------------------------------------------------------------------------- */
/* init: any memory (also memory that held a lock of another kind, once unlocked) becomes an
 * unlocked mutex of that kind. EINVAL: NULL, or no such kind (the memory is left as it was).
 * Kinds and formats are passed as int (a spinwise_mutex_kind, ...), so that any value a caller
 * passes is defined behaviour and a bad one is EINVAL (C++ may not hold an enum outside its
 * range). */
int spinwise_mutex_init(spinwise_mutex_t* m, int kind);
int spinwise_mutex_init_kind(spinwise_mutex_t* m, const char* kind_name);
/* EBUSY while locked (nothing changed); after it, every call but init is EINVAL. */
int spinwise_mutex_destroy(spinwise_mutex_t* m);
/* The kind's name, or NULL for NULL, a destroyed mutex, or bytes whose kind byte names no kind.
 * All-zero memory is the static initializer's hybrid mutex, so it gives "hybrid"; other memory
 * that was never initialized is no mutex (it may give any name, or NULL). */
const char* spinwise_mutex_kind_name(const spinwise_mutex_t* m);
int spinwise_mutex_lock(spinwise_mutex_t* m);
/* EBUSY: held by someone (maybe the caller). */
int spinwise_mutex_trylock(spinwise_mutex_t* m);
/* Waits until `abstime` on CLOCK_MONOTONIC; ETIMEDOUT once it passed (a past time: a trylock). */
int spinwise_mutex_timedlock(spinwise_mutex_t* m, const struct timespec* abstime);
/* EPERM: the mutex is not locked. A mutex has no owner: unlocking one another thread holds is
 * not detected (use the recursive mutex for that). */
int spinwise_mutex_unlock(spinwise_mutex_t* m);

/* --- rwlock: shared (rd) and exclusive (wr) ------------------------------------------------- */
int spinwise_rwlock_init(spinwise_rwlock_t* rw, int kind); /* a spinwise_rwlock_kind */
int spinwise_rwlock_init_kind(spinwise_rwlock_t* rw, const char* kind_name);
int spinwise_rwlock_destroy(spinwise_rwlock_t* rw); /* EBUSY while held in either mode */
const char* spinwise_rwlock_kind_name(const spinwise_rwlock_t* rw);
int spinwise_rwlock_rdlock(spinwise_rwlock_t* rw);
int spinwise_rwlock_tryrdlock(spinwise_rwlock_t* rw);
int spinwise_rwlock_timedrdlock(spinwise_rwlock_t* rw, const struct timespec* abstime);
/* EPERM: no reader holds it (rd) / no writer holds it (wr); nothing changed. The lock keeps no
 * per-thread record: an unlock of a mode that other threads hold is not detected. */
int spinwise_rwlock_rdunlock(spinwise_rwlock_t* rw);
int spinwise_rwlock_wrlock(spinwise_rwlock_t* rw);
int spinwise_rwlock_trywrlock(spinwise_rwlock_t* rw);
int spinwise_rwlock_timedwrlock(spinwise_rwlock_t* rw, const struct timespec* abstime);
int spinwise_rwlock_wrunlock(spinwise_rwlock_t* rw);

/* --- recursive mutex ------------------------------------------------------------------------ */
int spinwise_recursive_mutex_init(spinwise_recursive_mutex_t* r, int kind); /* a spinwise_mutex_kind */
int spinwise_recursive_mutex_init_kind(spinwise_recursive_mutex_t* r, const char* kind_name);
int spinwise_recursive_mutex_destroy(spinwise_recursive_mutex_t* r); /* EBUSY while owned */
/* The owner locks again (depth + 1); EAGAIN at the deepest depth (2^32 - 1), nothing changed. */
int spinwise_recursive_mutex_lock(spinwise_recursive_mutex_t* r);
int spinwise_recursive_mutex_trylock(spinwise_recursive_mutex_t* r);
int spinwise_recursive_mutex_timedlock(spinwise_recursive_mutex_t* r, const struct timespec* abstime);
/* EPERM: the caller is not the owner. The owner is the thread, whichever module calls: modules
 * that share spinwise's process-wide state (docs/integration.md) agree on it. */
int spinwise_recursive_mutex_unlock(spinwise_recursive_mutex_t* r);
/* How many times the calling thread holds it (0: not the owner, or NULL). */
unsigned spinwise_recursive_mutex_depth(const spinwise_recursive_mutex_t* r);

/* --- knobs and profiles ----------------------------------------------------------------------
 * All or nothing: on an error nothing changed, and spinwise_last_message() says why. */
/* spinwise_set_knob("hybrid_mutex", "delay_unit_ns", "150"): one knob of a lock class or policy
 * family (docs/knobs.md lists them). */
int spinwise_set_knob(const char* lock_class, const char* knob, const char* value);
/* A batch in SPINWISE_KNOBS syntax: "hybrid_mutex.spin_wait_delay=6,time.delay_unit_ns=150". */
int spinwise_apply_knobs(const char* text);
int spinwise_check_knobs(const char* text); /* the same, setting nothing */
int spinwise_load_knobs(const char* path);  /* a knob file: one entry a line */
/* A calibration profile (spinwise-calibrate's output), checked against this machine. */
int spinwise_load_profile(const char* path);
/* SPINWISE_PROFILE, SPINWISE_KNOBS and SPINWISE_RELAX, as configure_from_env(); unset is no error. */
int spinwise_configure_from_env(void);
/* The calling thread's last failed call's explanation ("" after a success), at most 1023 bytes (a
 * longer one is cut, ending in "..."). Valid until the thread's next spinwise call. */
const char* spinwise_last_message(void);

/* --- statistics ------------------------------------------------------------------------------
 * Every C lock counts into a class per kind: c.hybrid, c.adaptive, c.tas, c.ttas, c.ticket,
 * c.mcs, c.rwlock.hybrid, c.rwlock.spin (recursive mutexes into their kind's). */
typedef enum spinwise_stats_format {
  SPINWISE_STATS_TEXT = 0,      /* InnoDB SEMAPHORES-shaped text */
  SPINWISE_STATS_JSON = 1,      /* spinwise.lock_stats JSON */
  SPINWISE_STATS_PROMETHEUS = 2 /* Prometheus text exposition 0.0.4 */
} spinwise_stats_format;
/* Writes the report of every lock class of the process, NUL-terminated, into buf. *needed (when
 * not NULL) gets its size with the NUL. ERANGE: size is too small, buf is left as it was (call
 * again with *needed, or more: the report may grow in between). buf may be NULL with size 0. */
int spinwise_stats_report(int format, char* buf, size_t size, size_t* needed); /* a spinwise_stats_format */
int spinwise_stats_reset(void);

/* Never NULL. A static message for a code this API returns; for any other code N, "Unknown error
 * N" (as glibc's strerror), in a buffer of the calling thread valid until its next call of this. */
const char* spinwise_strerror(int code);

/* The library's version, SPINWISE_VERSION of the headers it was built from: a program compares it
 * with its own SPINWISE_VERSION to see that it runs with the library it was compiled against. */
int spinwise_version(void);

#ifdef __cplusplus
}
#endif

#endif /* SPINWISE_SPINWISE_H */
