// A multi-threaded C++ program that frees everything it allocates: four
// std::threads and the main thread build and drop strings, vectors and maps,
// and it prints with printf (so stdout gets the buffer stdio allocates).
// What still shows as live at exit is the C/C++ runtime's own bookkeeping:
// `memrec report` must list it as runtime_retained and report zero leaked.
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#define NOINLINE __attribute__((noinline))

NOINLINE static void work(int seed) {
  std::vector<std::string> strings;
  for (int i = 0; i < 200; ++i) strings.emplace_back(static_cast<std::size_t>(50 + i + seed), 'x');
  std::map<int, std::unique_ptr<int[]>> blocks;
  for (int i = 0; i < 50; ++i) blocks[i] = std::make_unique<int[]>(static_cast<std::size_t>(100 + i));
}

int main() {
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back(work, i);
  for (std::thread& t : threads) t.join();
  // A second round reuses the cached thread stacks (and their DTVs).
  threads.clear();
  for (int i = 0; i < 4; ++i) threads.emplace_back(work, i + 4);
  for (std::thread& t : threads) t.join();
  work(100);
  std::printf("cpp_threads_clean: done\n");
  return 0;
}
