// C++ exceptions through allocating frames: `throw_through N` (default 200)
// runs N rounds; each descends 12 levels of descend(), where every level owns
// a unique_ptr<char[]> of 200 + level bytes and a vector<int> (both freed by
// the unwinding), levels 0, 3, 6 and 9 leak 1 x (300 + level) from
// leak_in_frame(), and the deepest level throws a runtime_error whose message
// is too long for the small-string buffer. Level 6 catches everything,
// allocates and frees in rethrow_cleanup(), and rethrows. main catches.
// Leaks: 4 N blocks, 1218 N bytes, all from leak_in_frame.
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#define NOINLINE __attribute__((noinline))

namespace {

constexpr int kLevels = 12;
char* volatile g_sink[64];
unsigned g_sink_next;

NOINLINE void leak_in_frame(int level) { g_sink[g_sink_next++ % 64] = new char[300 + level]; }

NOINLINE void rethrow_cleanup() { delete[] new char[77]; }

NOINLINE void descend(int level) {
  std::unique_ptr<char[]> owned(new char[200 + level]);
  std::vector<int> numbers(static_cast<std::size_t>(level) + 1, level);
  if (level % 3 == 0) leak_in_frame(level);
  if (level + 1 == kLevels) throw std::runtime_error(std::string(64, 'x') + " from the deepest frame");
  if (level == 6) {
    try {
      descend(level + 1);
    } catch (...) {
      rethrow_cleanup();
      throw;
    }
  } else {
    descend(level + 1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  static char stdout_buffer[4096];
  std::setvbuf(stdout, stdout_buffer, _IOLBF, sizeof stdout_buffer);
  const long rounds = argc > 1 ? std::atol(argv[1]) : 200;
  long caught = 0;
  std::size_t message_bytes = 0;
  for (long i = 0; i < rounds; ++i) {
    try {
      descend(0);
    } catch (const std::runtime_error& error) {
      caught += 1;
      message_bytes += std::string(error.what()).size();
    }
  }
  std::printf("throw_through: %ld caught, %zu message bytes\n", caught, message_bytes);
  return 0;
}
