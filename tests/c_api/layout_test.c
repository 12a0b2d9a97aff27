/* The lock types' layout, checked by the compiler alone (tests/c_api/CMakeLists.txt compiles it
 * for i386 with -fsyntax-only). Bug guarded (issue 44, item 5): the header said the types were
 * 8-byte aligned, but on i386 a long long or a double inside a struct is 4-aligned, and so were
 * they. C99 has no static assertion: an array of negative size is the error. */
#include <stddef.h>

#include "layout_probes.h"

#define LAYOUT_CHECK(name, cond) typedef char name[(cond) ? 1 : -1]

LAYOUT_CHECK(mutex_is_8_aligned, offsetof(struct mutex_probe, m) == 8);
LAYOUT_CHECK(rwlock_is_8_aligned, offsetof(struct rwlock_probe, rw) == 8);
LAYOUT_CHECK(recursive_mutex_is_8_aligned, offsetof(struct recursive_probe, r) == 8);
LAYOUT_CHECK(mutex_size, sizeof(spinwise_mutex_t) == SPINWISE_LOCK_BYTES && SPINWISE_LOCK_BYTES == 64);
LAYOUT_CHECK(rwlock_size, sizeof(spinwise_rwlock_t) == 64);
LAYOUT_CHECK(recursive_mutex_size, sizeof(spinwise_recursive_mutex_t) == 80);
