#pragma once
// Helpers shared by the lock tests: lock traits, on top of tests/common/test_util.hpp (work
// scaling, thread counts, thread states).

#include <chrono>
#include <type_traits>
#include <utility>

#include "test_util.hpp"

namespace spinwise_test {

template <class M, class = void>
struct is_timed_lockable : std::false_type {};
template <class M>
struct is_timed_lockable<
    M, std::void_t<decltype(std::declval<M&>().try_lock_for(std::chrono::milliseconds(1))),
                   decltype(std::declval<M&>().try_lock_until(std::chrono::steady_clock::now()))>>
    : std::true_type {};

}  // namespace spinwise_test
