// Scenario 7: the statistics file (SPINWISE_PRELOAD_STATS) is a symlink to another file. The
// interposer must not write through it: a process can be made to clobber any file its user may
// write. The scenario makes a directory with a target file and a symlink to it, runs itself again
// (role "locker", same environment, so under the same interposer) with the variable naming the
// symlink, and checks that the target is unchanged. Without the interposer nothing writes the file.
#include <pthread.h>
#include <sys/stat.h>

#include "scenario.hpp"

namespace {

constexpr char kOriginal[] = "the target's own content\n";

// Takes each kind of lock the statistics count, then exits normally (the statistics are written
// at exit).
int locker() {
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_t r = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
  pthread_mutex_t e = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
  pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
  int rc = 0;
  for (pthread_mutex_t* x : {&m, &r, &e}) rc |= pthread_mutex_lock(x) | pthread_mutex_unlock(x);
  rc |= pthread_rwlock_rdlock(&rw) | pthread_rwlock_unlock(&rw);
  rc |= pthread_rwlock_wrlock(&rw) | pthread_rwlock_unlock(&rw);
  return rc == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  sc::begin();
  if (argc == 2 && strcmp(argv[1], "locker") == 0) return locker();
  sc::step("make a target file and a symlink to it");
  const char* tmp = getenv("TMPDIR");
  char dir[256];
  snprintf(dir, sizeof dir, "%s/spinwise-diff-XXXXXX", tmp != nullptr && *tmp != '\0' ? tmp : "/tmp");
  if (mkdtemp(dir) == nullptr) {
    perror("mkdtemp");
    return 2;
  }
  char target[300], link[300];
  snprintf(target, sizeof target, "%s/target", dir);
  snprintf(link, sizeof link, "%s/stats.json", dir);
  FILE* f = fopen(target, "w");
  if (f == nullptr || fputs(kOriginal, f) < 0 || fclose(f) != 0 || symlink(target, link) != 0) {
    perror("setup");
    return 2;
  }
  sc::step("a process that takes locks, with the statistics file naming the symlink");
  const pid_t pid = fork();
  if (pid == 0) {
    setenv("SPINWISE_PRELOAD_STATS", link, 1);
    char* args[] = {argv[0], const_cast<char*>("locker"), nullptr};
    execv("/proc/self/exe", args);
    _exit(127);
  }
  sc::track_child(pid);
  sc::out("locker: %s\n", sc::status_name(sc::wait_child(pid, 5000)));
  sc::step("read the target");
  char buf[4096] = {};
  f = fopen(target, "r");
  const size_t n = f != nullptr ? fread(buf, 1, sizeof buf - 1, f) : 0;
  if (f != nullptr) fclose(f);
  sc::out("target: %s\n",
          n == strlen(kOriginal) && strcmp(buf, kOriginal) == 0 ? "unchanged" : "overwritten");
  struct stat st {};
  sc::out("link: %s\n", lstat(link, &st) == 0 && S_ISLNK(st.st_mode) ? "still a symlink" : "replaced");
  unlink(link);
  unlink(target);
  rmdir(dir);
  sc::step("end");
  sc::out("done\n");
  return 0;
}
