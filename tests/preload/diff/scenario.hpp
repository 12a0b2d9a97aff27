// What every differential scenario (tests/preload/diff) shares: unbuffered output, a watchdog
// that turns a hang into a line naming the step that hung, error names, and handshakes that order
// events without sleeping (pipes, and /proc to see that a thread is blocked in a call).
//
// A scenario prints only deterministic facts; run_diff.cmake compares its output under
// LD_PRELOAD=libspinwise-preload.so with its output on plain glibc (the oracle). Handshakes here
// use no pthread lock or condition variable: those are what is under test.
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <initializer_list>

namespace sc {

// Every step of a scenario must end within this many seconds on plain glibc, even beside a CPU hog;
// a step still running then prints "HANG in step: <step>" and the scenario exits with kHangExit.
constexpr unsigned kStepSeconds = 10;
constexpr int kHangExit = 3;

inline const char* volatile g_step = "start";
inline pid_t g_children[8];  // killed by the watchdog, so that nothing outlives the scenario
inline std::atomic<int> g_nchildren{0};
inline volatile bool g_mid_line = false;  // the last output did not end a line

inline void on_alarm(int) {
  static const char head[] = "HANG in step: ";
  if (g_mid_line) (void)!write(1, "\n", 1);  // the hang line stays a line of its own
  (void)!write(1, head, sizeof head - 1);
  const char* s = g_step;
  (void)!write(1, s, strlen(s));
  (void)!write(1, "\n", 1);
  for (int i = 0; i < g_nchildren.load(); ++i)
    if (g_children[i] > 0) kill(g_children[i], SIGKILL);
  _exit(kHangExit);
}

// Output goes straight to the file: a forked child that calls exit() must not print the parent's
// buffered lines a second time.
inline void begin() {
  setvbuf(stdout, nullptr, _IONBF, 0);
  struct sigaction sa {};
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, nullptr);
  alarm(kStepSeconds);
}

// Names the step now running and gives it kStepSeconds (or seconds).
inline void step(const char* what, unsigned seconds = kStepSeconds) {
  g_step = what;
  alarm(seconds);
}

inline void out(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline void out(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  fputs(buf, stdout);
  const size_t len = strlen(buf);
  if (len > 0) g_mid_line = buf[len - 1] != '\n';
}

inline const char* err(int rc) {
  switch (rc) {
    case 0:
      return "0";
    case EBUSY:
      return "EBUSY";
    case EINVAL:
      return "EINVAL";
    case ETIMEDOUT:
      return "ETIMEDOUT";
    case EDEADLK:
      return "EDEADLK";
    case EPERM:
      return "EPERM";
    case EAGAIN:
      return "EAGAIN";
    case EINTR:
      return "EINTR";
    case ESRCH:
      return "ESRCH";
    case ENOMEM:
      return "ENOMEM";
    default: {
      static char buf[32];
      snprintf(buf, sizeof buf, "error %d", rc);
      return buf;
    }
  }
}

// A deadline ms milliseconds from now on clock.
inline timespec in_ms(clockid_t clock, long ms) {
  timespec t{};
  clock_gettime(clock, &t);
  t.tv_nsec += (ms % 1000) * 1'000'000L;
  t.tv_sec += ms / 1000 + t.tv_nsec / 1'000'000'000L;
  t.tv_nsec %= 1'000'000'000L;
  return t;
}

// A one-way event between threads or processes: post() writes one byte, wait() reads one.
struct gate {
  int fd[2] = {-1, -1};
  gate() {
    if (pipe(fd) != 0) {
      perror("pipe");
      exit(2);
    }
  }
  void post(int n = 1) {
    for (int i = 0; i < n; ++i) (void)!write(fd[1], "x", 1);
  }
  void wait() {
    char c;
    while (read(fd[0], &c, 1) != 1) {
    }
  }
};

// State and CPU ticks (utime + stime) of thread tid of process pid, from /proc.
inline bool task_stat(pid_t pid, pid_t tid, char* state, unsigned long long* ticks) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task/%d/stat", static_cast<int>(pid), static_cast<int>(tid));
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[1024];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  const char* p = strrchr(buf, ')');  // the name may hold spaces and parentheses
  if (p == nullptr) return false;
  unsigned long long f[13] = {};
  // after ") ": state, then fields 4..15; utime and stime are fields 14 and 15
  if (sscanf(p + 2, "%c %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", state, &f[0], &f[1],
             &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9], &f[10], &f[11]) != 13)
    return false;
  *ticks = f[10] + f[11];
  return true;
}

// The context switches of thread tid of process pid so far, voluntary and not (/proc/.../status):
// a thread that sleeps or yields gives up its CPU, one that spins is taken off it by the scheduler
// when others want the CPU, and each time adds one.
inline bool task_switches(pid_t pid, pid_t tid, unsigned long long* n) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task/%d/status", static_cast<int>(pid), static_cast<int>(tid));
  FILE* f = fopen(path, "re");
  if (f == nullptr) return false;
  char line[256];
  int found = 0;
  unsigned long long v = 0, total = 0;
  while (found < 2 && fgets(line, sizeof line, f) != nullptr) {
    if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1 ||
        sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1) {
      total += v;
      ++found;
    }
  }
  fclose(f);
  *n = total;
  return found == 2;
}

// Returns once thread tid (of process pid; 0: this one), which announced that its next action is a
// call that may block, is inside that call: asleep ('S'), or waiting in it without sleeping (the
// spinning kinds never sleep): 3 clock ticks of CPU time, or 3 context switches, since the
// announcement. A thread that is running its last instructions before the call has none of these:
// no system call lies between the announcement and the call, and a slice of CPU is enough to
// reach it, so a third switch finds it inside. Beside a CPU hog a spinner is preempted over and
// over and may be charged no tick in seconds (flake hunt, 2026-12-06: 0 ticks after 3 s of
// spinning, 847 preemptions; two scenarios under ttas hung here), but each switch is counted.
inline void wait_blocked(pid_t tid, pid_t pid = 0) {
  if (pid == 0) pid = getpid();
  char st = '?';
  unsigned long long base = 0, now = 0, switches_base = 0, switches = 0;
  bool have_base = false;
  for (;;) {
    if (!task_stat(pid, tid, &st, &now)) return;  // gone: not blocked any more
    if (st == 'S' || st == 'D') return;
    const bool have_switches = task_switches(pid, tid, &switches);
    if (!have_base) {
      base = now;
      switches_base = switches;
      have_base = true;
    } else if (now >= base + 3 || (have_switches && switches >= switches_base + 3)) {
      return;
    }
    usleep(200);  // polling: a handshake with a thread that cannot answer
  }
}

inline void track_child(pid_t pid) {
  const int i = g_nchildren.load();
  if (i < static_cast<int>(sizeof g_children / sizeof g_children[0])) {
    g_children[i] = pid;
    g_nchildren.store(i + 1);
  }
}

// A process's state letter (R, S, D, ...) and the CPU time it has used, in clock ticks, from
// /proc/PID/stat; false when it cannot be read.
inline bool process_progress(pid_t pid, char* state, unsigned long long* ticks) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  FILE* f = fopen(path, "r");
  if (f == nullptr) return false;
  char buf[1024];
  const size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char* p = strrchr(buf, ')');  // the name may hold spaces and parentheses
  unsigned long long user = 0, sys = 0;
  if (p == nullptr ||
      sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", state, &user, &sys) != 3)
    return false;
  *ticks = user + sys;
  return true;
}

inline bool passed(const timespec& end) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec > end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec);
}

// Whether a child past its time is stuck: asleep, and its CPU time unchanged over 200 ms. A
// child that still runs, or waits for a CPU, is slow, not hung: on a machine busy with other work
// (a load of 10-20) a child's exit took more than the 3 s fork_with_stats gives it, and a verdict
// by the clock alone called it hung.
inline bool stuck(pid_t pid) {
  char s1 = 0, s2 = 0;
  unsigned long long t1 = 0, t2 = 0;
  if (!process_progress(pid, &s1, &t1)) return true;  // a zombie's or a gone child's: reaped next
  usleep(200'000);
  if (!process_progress(pid, &s2, &t2)) return true;
  return s1 == 'S' && s2 == 'S' && t1 == t2;
}

// Waits for child pid up to ms milliseconds, and past them while it is not stuck (above), up to
// 20 s more (a child that spins in a lock forever is hung too, and fork_with_stats' five of them
// must stay within its run's bound); a child still alive then is killed and reaped. Returns its status, or -1
// when it had to be killed.
inline int wait_child(pid_t pid, long ms) {
  const timespec end = in_ms(CLOCK_MONOTONIC, ms);
  const timespec last = in_ms(CLOCK_MONOTONIC, ms + 20'000);
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return -2;
    if (passed(end) && (passed(last) || stuck(pid))) {
      if (waitpid(pid, &status, WNOHANG) == pid) return status;  // it ended meanwhile
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    usleep(100);
  }
}

// A child's status in words: "exit 0", "signal 9", "hung (killed)".
inline const char* status_name(int status) {
  static char buf[32];
  if (status == -1) return "hung (killed)";
  if (status == -2) return "lost";
  if (WIFEXITED(status))
    snprintf(buf, sizeof buf, "exit %d", WEXITSTATUS(status));
  else if (WIFSIGNALED(status))
    snprintf(buf, sizeof buf, "signal %d", WTERMSIG(status));
  else
    snprintf(buf, sizeof buf, "status %d", status);
  return buf;
}

}  // namespace sc
