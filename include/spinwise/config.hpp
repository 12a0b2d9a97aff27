#pragma once
// Compiler portability macros used by every spinwise header.

// SPINWISE_VERSION_MAJOR, _MINOR, _PATCH and _STRING, reachable from here as they always were.
#include "spinwise/version.hpp"

#if defined(__GNUC__) || defined(__clang__)
#define SPINWISE_ALWAYS_INLINE inline __attribute__((always_inline))
#define SPINWISE_NOINLINE __attribute__((noinline))
#define SPINWISE_COLD __attribute__((cold, noinline))
#define SPINWISE_LIKELY(x) __builtin_expect(!!(x), 1)
#define SPINWISE_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define SPINWISE_ALWAYS_INLINE inline
#define SPINWISE_NOINLINE
#define SPINWISE_COLD
#define SPINWISE_LIKELY(x) (x)
#define SPINWISE_UNLIKELY(x) (x)
#endif
