/* Bug guarded (issue 44, item 4): a recursive mutex's owner was per module. A host and a plugin it
 * dlopen()s, each linked with the static C library (the host with spinwise::export_state, as
 * docs/integration.md says a host that only dlopen()s must be), on one thread: the host locked a
 * recursive mutex, and the plugin then saw depth 0, trylock EBUSY, unlock EPERM, and its lock
 * waited forever: each copy of the library named the thread by a thread_local of its own. The
 * owner is now the process-wide thread identity (detail/process_state.hpp), which every module
 * shares. Here the plugin never waits (its lock is a trylock or a passed timedlock).
 *
 *   module_host <path of module_plugin.so>                                                    */
#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

#include "c_check.h"
#include "module_probe.h"

static spinwise_recursive_mutex_t r = SPINWISE_RECURSIVE_MUTEX_INITIALIZER;

int main(int argc, char** argv) {
  const struct module_plugin* plugin;
  struct module_probe p;
  void* so;
  if (argc != 2) {
    fprintf(stderr, "usage: %s <module_plugin.so>\n", argv[0]);
    return 2;
  }
  so = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (so == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 2;
  }
  plugin = (const struct module_plugin*)dlsym(so, "module_plugin");
  if (plugin == NULL) {
    fprintf(stderr, "dlsym: %s\n", dlerror());
    return 2;
  }

  /* The host holds it; the plugin is the same thread, so the owner. */
  CHECK(spinwise_recursive_mutex_lock(&r) == 0);
  plugin->probe(&r, &p);
#ifdef TWO_COPIES
  /* Two copies of the static library, or the test proves nothing. */
  CHECK(p.lock_function != spinwise_recursive_mutex_lock);
#endif
  CHECK(p.depth_seen == 1);
  CHECK(p.trylock == 0);
  CHECK(p.timedlock == 0);
  CHECK(p.depth_inside == 3);
  CHECK(p.unlock == 0);
  CHECK(spinwise_recursive_mutex_depth(&r) == 1);
  CHECK(spinwise_recursive_mutex_unlock(&r) == 0);
  CHECK(spinwise_recursive_mutex_depth(&r) == 0);

  /* And the other way: the plugin holds it, the host enters and leaves, the plugin releases it. */
  CHECK(plugin->lock(&r) == 0);
  CHECK(spinwise_recursive_mutex_depth(&r) == 1);
  CHECK(spinwise_recursive_mutex_trylock(&r) == 0);
  CHECK(spinwise_recursive_mutex_unlock(&r) == 0);
  CHECK(plugin->unlock(&r) == 0);
  CHECK(spinwise_recursive_mutex_unlock(&r) == EPERM); /* free: nobody owns it */
  CHECK(spinwise_recursive_mutex_trylock(&r) == 0);    /* and it was released */
  CHECK(spinwise_recursive_mutex_unlock(&r) == 0);
  CHECK(spinwise_recursive_mutex_destroy(&r) == 0);

  dlclose(so);
  if (failures != 0) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("spinwise C API: one recursive mutex owner across a host and a dlopen()ed plugin\n");
  return 0;
}
