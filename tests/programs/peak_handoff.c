// A peak that would only appear if two threads' events were put in the wrong
// order. main and a helper thread take turns, 20 times: main makes 500
// short-lived blocks (so that its events follow each other closely), frees
// its block of 1 MiB, and only then wakes the helper, which allocates 1 MiB in
// helper_big(), frees it and wakes main, which allocates its next 1 MiB in
// main_big(). Nothing orders main's free before the helper's allocation but
// the condition variable between them, which the recorder does not see; the
// heap never holds more than one 1 MiB block. Nothing leaks.
#include <pthread.h>

#include "common.h"

enum { kRounds = 20, kBig = 1 << 20, kSmall = 500 };

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_changed = PTHREAD_COND_INITIALIZER;
static int g_turn;  // 0: main's, 1: the helper's; rounds counted by main

NOINLINE static void* main_big(void) { return malloc(kBig); }
NOINLINE static void* helper_big(void) { return malloc(kBig); }

NOINLINE static void small_churn(void) {
  for (int i = 0; i < kSmall; ++i) free(malloc(64));
}

static void wait_for(int turn) {
  pthread_mutex_lock(&g_lock);
  while (g_turn != turn) pthread_cond_wait(&g_changed, &g_lock);
  pthread_mutex_unlock(&g_lock);
}

static void hand_to(int turn) {
  pthread_mutex_lock(&g_lock);
  g_turn = turn;
  pthread_cond_broadcast(&g_changed);
  pthread_mutex_unlock(&g_lock);
}

static void* helper(void* arg) {
  (void)arg;
  for (int r = 0; r < kRounds; ++r) {
    wait_for(1);
    void* block = helper_big();
    if (block == NULL) die("malloc");
    free(block);
    hand_to(0);
  }
  return NULL;
}

int main(void) {
  setup_stdout();
  pthread_t thread;
  if (pthread_create(&thread, NULL, helper, NULL) != 0) die("pthread_create");
  for (int r = 0; r < kRounds; ++r) {
    void* block = main_big();
    if (block == NULL) die("malloc");
    small_churn();
    free(block);
    hand_to(1);
    wait_for(0);
  }
  if (pthread_join(thread, NULL) != 0) die("pthread_join");
  printf("peak_handoff: %d rounds\n", kRounds);
  return 0;
}
