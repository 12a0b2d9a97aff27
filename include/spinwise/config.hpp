#pragma once
// Compiler portability macros used by every spinwise header.

#define SPINWISE_VERSION_MAJOR 0
#define SPINWISE_VERSION_MINOR 2
#define SPINWISE_VERSION_PATCH 0
#define SPINWISE_VERSION_STRING "0.2.0"

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
