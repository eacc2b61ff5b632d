// core_pingpong: the round trip of one cache line between two CPUs, in ns.
//
// Two threads, pinned to the first two CPUs this process may use, hand a
// counter back and forth 200,000 times; prints the mean round trip. memrec's
// writer reads every event the program's thread wrote, about a cache line
// each, so its overhead follows this number where a program whose threads
// share nothing does not: on the 2-vCPU VM of 2026-11-25 it was 80-120 ns
// most of the time and about 400 ns for minutes at a time, and memrec's runs
// took 1.8x longer then (docs/performance.md). scripts/bench prints it with
// every repetition. Prints nothing and exits 1 with fewer than two CPUs.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

enum { kRoundTrips = 200000 };

static _Alignas(64) atomic_long g_turn;
static int g_cpus[2];

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void* answer(void* unused) {
  (void)unused;
  pin(g_cpus[1]);
  for (long i = 0; i < kRoundTrips; ++i) {
    while (atomic_load_explicit(&g_turn, memory_order_acquire) != 2 * i + 1) {
    }
    atomic_store_explicit(&g_turn, 2 * i + 2, memory_order_release);
  }
  return NULL;
}

int main(void) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 1;
  int found = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE && found < 2; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) g_cpus[found++] = cpu;
  }
  if (found < 2) return 1;
  pthread_t other;
  if (pthread_create(&other, NULL, answer, NULL) != 0) return 1;
  pin(g_cpus[0]);
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (long i = 0; i < kRoundTrips; ++i) {
    atomic_store_explicit(&g_turn, 2 * i + 1, memory_order_release);
    while (atomic_load_explicit(&g_turn, memory_order_acquire) != 2 * i + 2) {
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &end);
  pthread_join(other, NULL);
  const double ns = (double)(end.tv_sec - start.tv_sec) * 1e9 + (double)(end.tv_nsec - start.tv_nsec);
  printf("%.0f\n", ns / kRoundTrips);
  return 0;
}
