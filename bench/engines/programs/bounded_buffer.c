/* A producer/consumer bounded buffer on one pthread mutex and two condition variables, the shape
 * of a thread pool's work queue: the real-program harness's lock-bound program (run.py,
 * docs/engines.md, "Real programs under the interposer"). Plain C on pthreads, nothing of
 * spinwise's: it runs on glibc's locks or on whatever LD_PRELOAD puts under them.
 *
 *   spinwise-bounded-buffer [--producers P] [--consumers C] [--items N] [--capacity K]
 *                           [--wake signal|broadcast]
 *
 * Each producer puts N items (its index * N + i, i < N) through a ring of K slots; consumers take
 * them until every item is taken. `signal` wakes one waiter per put or take, `broadcast` every
 * waiter. Prints one line: "items X sum S expected_sum E seconds T"; exit 0 when X and S are what
 * was put, 1 when an item was lost or doubled, 2 for a bad flag. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct ring {
  pthread_mutex_t lock;
  pthread_cond_t not_full;
  pthread_cond_t not_empty;
  uint64_t* slots;
  size_t capacity;
  size_t head; /* next slot to take */
  size_t count;
  uint64_t remaining; /* items still to be taken, over all producers */
  int broadcast;
};

struct consumer_result {
  uint64_t items;
  uint64_t sum;
};

static struct ring g_ring;
static uint64_t g_items_each;

static void wake(pthread_cond_t* c) {
  if (g_ring.broadcast)
    pthread_cond_broadcast(c);
  else
    pthread_cond_signal(c);
}

static void* produce(void* arg) {
  uint64_t base = (uint64_t)(uintptr_t)arg * g_items_each;
  for (uint64_t i = 0; i < g_items_each; ++i) {
    pthread_mutex_lock(&g_ring.lock);
    while (g_ring.count == g_ring.capacity) pthread_cond_wait(&g_ring.not_full, &g_ring.lock);
    g_ring.slots[(g_ring.head + g_ring.count) % g_ring.capacity] = base + i;
    ++g_ring.count;
    wake(&g_ring.not_empty);
    pthread_mutex_unlock(&g_ring.lock);
  }
  return NULL;
}

static void* consume(void* arg) {
  struct consumer_result* r = arg;
  uint64_t items = 0, sum = 0; /* kept here, stored once: the results share a cache line */
  for (;;) {
    pthread_mutex_lock(&g_ring.lock);
    while (g_ring.count == 0 && g_ring.remaining > 0) pthread_cond_wait(&g_ring.not_empty, &g_ring.lock);
    if (g_ring.count == 0) { /* every item taken: wake the other consumers to see it too */
      pthread_cond_broadcast(&g_ring.not_empty);
      pthread_mutex_unlock(&g_ring.lock);
      r->items = items;
      r->sum = sum;
      return NULL;
    }
    uint64_t v = g_ring.slots[g_ring.head];
    g_ring.head = (g_ring.head + 1) % g_ring.capacity;
    --g_ring.count;
    --g_ring.remaining;
    if (g_ring.remaining == 0) pthread_cond_broadcast(&g_ring.not_empty);
    wake(&g_ring.not_full);
    pthread_mutex_unlock(&g_ring.lock);
    items += 1;
    sum += v;
  }
}

static int parse_count(const char* flag, const char* text, uint64_t* out) {
  char* end = NULL;
  unsigned long long v;
  if (text == NULL || *text < '0' || *text > '9') goto bad;
  v = strtoull(text, &end, 10);
  if (*end != '\0' || v == 0 || v > (1ULL << 40)) goto bad;
  *out = v;
  return 0;
bad:
  fprintf(stderr, "spinwise-bounded-buffer: %s takes a whole number from 1 to 2^40, not '%s'\n", flag,
          text ? text : "(nothing)");
  return -1;
}

int main(int argc, char** argv) {
  uint64_t producers = 4, consumers = 4, items = 200000, capacity = 16;
  int broadcast = 0;
  for (int i = 1; i < argc; ++i) {
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    int rc = 0;
    if (strcmp(argv[i], "--producers") == 0)
      rc = parse_count(argv[i], v, &producers);
    else if (strcmp(argv[i], "--consumers") == 0)
      rc = parse_count(argv[i], v, &consumers);
    else if (strcmp(argv[i], "--items") == 0)
      rc = parse_count(argv[i], v, &items);
    else if (strcmp(argv[i], "--capacity") == 0)
      rc = parse_count(argv[i], v, &capacity);
    else if (strcmp(argv[i], "--wake") == 0 && v && strcmp(v, "signal") == 0)
      broadcast = 0;
    else if (strcmp(argv[i], "--wake") == 0 && v && strcmp(v, "broadcast") == 0)
      broadcast = 1;
    else {
      fprintf(stderr, "spinwise-bounded-buffer: unknown option '%s' %s\n", argv[i],
              strcmp(argv[i], "--wake") == 0 ? "(--wake signal|broadcast)" : "");
      return 2;
    }
    if (rc != 0) return 2;
    ++i;
  }
  if (producers > 1024 || consumers > 1024) {
    fprintf(stderr, "spinwise-bounded-buffer: at most 1024 producers and 1024 consumers\n");
    return 2;
  }
  g_items_each = items;
  g_ring.capacity = capacity;
  g_ring.broadcast = broadcast;
  g_ring.remaining = producers * items;
  g_ring.slots = calloc(capacity, sizeof *g_ring.slots);
  pthread_t* threads = calloc(producers + consumers, sizeof *threads);
  struct consumer_result* results = calloc(consumers, sizeof *results);
  if (!g_ring.slots || !threads || !results) {
    fprintf(stderr, "spinwise-bounded-buffer: out of memory\n");
    return 1;
  }
  pthread_mutex_init(&g_ring.lock, NULL);
  pthread_cond_init(&g_ring.not_full, NULL);
  pthread_cond_init(&g_ring.not_empty, NULL);

  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (uint64_t c = 0; c < consumers; ++c)
    if (pthread_create(&threads[c], NULL, consume, &results[c]) != 0) return 1;
  for (uint64_t p = 0; p < producers; ++p)
    if (pthread_create(&threads[consumers + p], NULL, produce, (void*)(uintptr_t)p) != 0) return 1;
  for (uint64_t t = 0; t < producers + consumers; ++t) pthread_join(threads[t], NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);

  uint64_t taken = 0, sum = 0;
  for (uint64_t c = 0; c < consumers; ++c) {
    taken += results[c].items;
    sum += results[c].sum;
  }
  uint64_t total = producers * items;
  uint64_t expected =
      total % 2 == 0 ? total / 2 * (total - 1) : (total - 1) / 2 * total; /* 0 + ... + total-1 */
  double seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  printf("items %llu sum %llu expected_sum %llu seconds %.6f\n", (unsigned long long)taken,
         (unsigned long long)sum, (unsigned long long)expected, seconds);
  pthread_cond_destroy(&g_ring.not_empty);
  pthread_cond_destroy(&g_ring.not_full);
  pthread_mutex_destroy(&g_ring.lock);
  free(results);
  free(threads);
  free(g_ring.slots);
  return taken == total && sum == expected ? 0 : 1;
}
