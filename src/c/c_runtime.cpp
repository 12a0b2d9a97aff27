// spinwise::c's knobs, profiles and statistics (spinwise_set_knob ... spinwise_stats_reset): each the
// runtime's call, its status turned into an errno value and the thread's last message, no exception
// let out; and the error codes' words (spinwise_strerror) and the version.

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <system_error>

#include "spinwise/knob_text.hpp"
#include "spinwise/runtime/knob_config.hpp"
#include "spinwise/runtime/profile.hpp"
#include "spinwise/runtime/stats_report.hpp"
#include "spinwise/spinwise.h"

namespace {

using namespace spinwise;

// --- errors and messages ---------------------------------------------------------------------

// The calling thread's last message: a fixed, trivially destructible buffer, as SQLite's plug-in
// keeps its own (src/sqlite/sqlite.cpp). glibc runs pthread key destructors after the thread's C++
// thread_local destructors, and a call from one must work (the header promises no abort): a
// thread_local std::string was destroyed by then, and writing it was a use after free. 1 KiB a
// thread holds every message the knob and profile code writes, entry, key and bounds included.
constexpr std::size_t kMessageBytes = 1024;
thread_local char tl_message[kMessageBytes];

// Copies `m`, cut to fit with "..." at the end (before a UTF-8 sequence, never inside one).
void set_message(std::string_view m) noexcept {
  if (m.size() < kMessageBytes) {
    if (!m.empty()) std::memcpy(tl_message, m.data(), m.size());  // an empty view's data() may be null
    tl_message[m.size()] = '\0';
    return;
  }
  constexpr std::string_view kCut = "...";
  std::size_t n = kMessageBytes - 1 - kCut.size();
  while (n > 0 && (static_cast<unsigned char>(m[n]) & 0xc0) == 0x80) --n;  // m[n] continues a sequence
  std::memcpy(tl_message, m.data(), n);
  std::memcpy(tl_message + n, kCut.data(), kCut.size());
  tl_message[n + kCut.size()] = '\0';
}

// A spinwise error_code as the errno value of the std::errc condition it is equivalent to (the
// same that `ec == std::errc::...` tests in C++); EINVAL for one without a condition.
int errno_of(const std::error_code& ec) noexcept {
  if (!ec) return 0;
  const std::error_condition c = ec.default_error_condition();
  return c.category() == std::generic_category() ? c.value() : EINVAL;
}

template <class Status>
int outcome(const Status& st) noexcept {
  if (st.ok()) {
    set_message({});
    return 0;
  }
  set_message(st.message);
  return errno_of(st.error_code());
}

// Runs f at the boundary: no exception leaves.
template <class F>
int guarded(F&& f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    set_message("spinwise: out of memory");
    return ENOMEM;
  } catch (const std::exception& e) {
    set_message(e.what());
    return EIO;
  } catch (...) {
    set_message("spinwise: unexpected failure");
    return EIO;
  }
}

// Knob names and values are one entry of a batch: nothing in them may start another entry.
bool plain_knob_word(const char* s, bool value) noexcept {
  if (s == nullptr || *s == '\0') return false;
  for (; *s != '\0'; ++s) {
    if (*s == ',' || *s == '=' || *s == '\n' || *s == '\r' || *s == '#' || (!value && *s == '.'))
      return false;
  }
  return true;
}

}  // namespace

extern "C" {

// --- knobs and profiles ----------------------------------------------------------------------

int spinwise_set_knob(const char* lock_class, const char* knob, const char* value) {
  if (!plain_knob_word(lock_class, false) || !plain_knob_word(knob, false) || !plain_knob_word(value, true)) {
    set_message(
        "spinwise_set_knob: a class, a knob and a value, none empty or NULL, none with ',', '=' or '#'");
    return EINVAL;
  }
  return guarded([&] {
    return outcome(apply_knobs(std::string(lock_class) + "." + knob + "=" + value, knob_text_format::list));
  });
}

int spinwise_apply_knobs(const char* text) {
  if (text == nullptr) return EINVAL;
  return guarded([&] { return outcome(apply_knobs(text, knob_text_format::list)); });
}

int spinwise_check_knobs(const char* text) {
  if (text == nullptr) return EINVAL;
  return guarded([&] { return outcome(check_knobs(text, knob_text_format::list)); });
}

int spinwise_load_knobs(const char* path) {
  if (path == nullptr) return EINVAL;
  return guarded([&] { return outcome(load_knobs(path)); });
}

int spinwise_load_profile(const char* path) {
  if (path == nullptr) return EINVAL;
  return guarded([&] { return outcome(load_profile(path)); });
}

int spinwise_configure_from_env(void) {
  return guarded([] {
    const startup_status st = configure_from_env();
    if (st.ok()) {
      set_message({});
      return 0;
    }
    set_message(st.message());
    return errno_of(st.error_code());
  });
}

const char* spinwise_last_message(void) { return tl_message; }

// --- statistics ------------------------------------------------------------------------------

int spinwise_stats_report(int format, char* buf, size_t size, size_t* needed) {
  if (buf == nullptr && size != 0) return EINVAL;
  return guarded([&] {
    const stats_snapshot s = take_stats_snapshot();
    std::string report;
    switch (format) {
      case SPINWISE_STATS_TEXT:
        report = format_stats_text(s);
        break;
      case SPINWISE_STATS_JSON:
        report = format_stats_json(s);
        break;
      case SPINWISE_STATS_PROMETHEUS:
        report = format_stats_prometheus(s);
        break;
      default:
        set_message("spinwise_stats_report: no such format");
        return EINVAL;
    }
    if (needed != nullptr) *needed = report.size() + 1;
    if (report.size() + 1 > size) return ERANGE;
    std::memcpy(buf, report.c_str(), report.size() + 1);
    set_message({});
    return 0;
  });
}

int spinwise_stats_reset(void) {
  return guarded([] {
    reset_stats();
    return 0;
  });
}

const char* spinwise_strerror(int code) {
  switch (code) {
    case 0:
      return "success";
    case EINVAL:
      return "invalid argument (NULL, an unknown kind or name, a bad time, a malformed knob entry)";
    case EBUSY:
      return "the lock is held";
    case ETIMEDOUT:
      return "the deadline passed before the lock was taken";
    case EPERM:
      return "the caller does not hold the lock";
    case EAGAIN:
      return "the recursive mutex is held at its deepest depth";
    case ENOMEM:
      return "out of memory";
    case EDOM:
      return "a knob value outside its bounds";
    case ERANGE:
      return "the buffer is too small";
    case ENOENT:
      return "no such file";
    case EIO:
      return "the file could not be read, or an unexpected failure";
    case EFBIG:
      return "the file is too large";
    case EEXIST:
      return "the name is taken";
    case ENOTSUP:
      return "not supported on this CPU or build";
    default: {
      // glibc's words for a code it does not know, in a buffer of the thread as glibc's: trivially
      // destructible, so this works in a pthread key destructor too.
      thread_local char unknown[sizeof "Unknown error -2147483648"];
      std::snprintf(unknown, sizeof unknown, "Unknown error %d", code);
      return unknown;
    }
  }
}

int spinwise_version(void) { return SPINWISE_VERSION; }

}  // extern "C"
