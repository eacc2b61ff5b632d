// ProgressBar: on a terminal a bar redrawn in place and erased; elsewhere
// plain lines at an interval, which stay; nothing at all when disabled or
// before the work has taken its first interval.
#include "common/progress_bar.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace memrec::analyzer {
namespace {

// What `fn(file)` printed to a FILE in memory.
template <typename Fn>
std::string printed(Fn&& fn) {
  char* data = nullptr;
  std::size_t size = 0;
  std::FILE* f = open_memstream(&data, &size);
  REQUIRE(f != nullptr);
  fn(f);
  std::fclose(f);
  std::string out(data, size);
  std::free(data);
  return out;
}

// Updates `bar` until `ms` milliseconds have passed, `done` growing with
// them. The last update comes before `ms`, so a late wake-up adds no line.
void run(ProgressBar& bar, int ms) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const auto passed =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    if (passed >= ms) return;
    bar.update(static_cast<std::size_t>(passed), static_cast<std::size_t>(ms));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

TEST_SUITE("common/progress_bar") {
  TEST_CASE("elsewhere than a terminal, a long load prints a line each interval, which stays") {
    const std::string out = printed([](std::FILE* f) {
      ProgressBar bar(f, true, "loading big.dat", ProgressBar::Style::kLines, std::chrono::milliseconds(100));
      run(bar, 450);
    });
    CAPTURE(out);
    CHECK(out.find('\r') == std::string::npos);
    CHECK(out.find("\x1b") == std::string::npos);
    CHECK(out.rfind("memrec: loading big.dat: ", 0) == 0);
    CHECK(out.back() == '\n');
    std::size_t lines = 0;
    for (const char c : out) lines += c == '\n' ? 1 : 0;
    CHECK(lines >= 1);  // at about 100, 200, 300 and 400 ms on an idle machine
    CHECK(lines <= 4);  // never two within an interval
    CHECK(out.find("% after 0 s\n") != std::string::npos);
  }

  TEST_CASE("a load's lines say the bytes read, the events decoded and the time left") {
    const std::string out = printed([](std::FILE* f) {
      ProgressBar bar(f, true, "loading big.dat", ProgressBar::Style::kLines, std::chrono::milliseconds(50));
      const auto start = std::chrono::steady_clock::now();
      for (std::uint64_t step = 1;; ++step) {
        if (std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(230)) break;
        // A tenth of the file per step, 1,000 events a megabyte.
        bar.update(step, 100, LoadProgress{step * 100'000, 10'000'000, step * 100});
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    });
    CAPTURE(out);
    REQUIRE(out.find('\n') != std::string::npos);
    const std::string first = out.substr(0, out.find('\n'));
    CHECK(first.rfind("memrec: loading big.dat: ", 0) == 0);
    CHECK(first.find(" of 10.0 MB read, ") != std::string::npos);
    CHECK(first.find(" events decoded, about ") != std::string::npos);
    CHECK(first.substr(first.size() - 7) == " s left");
  }

  TEST_CASE("the interval comes from MEMREC_PROGRESS_INTERVAL_MS, else ten seconds") {
    ::setenv("MEMREC_PROGRESS_INTERVAL_MS", "250", 1);
    CHECK(ProgressBar::default_interval() == std::chrono::milliseconds(250));
    ::setenv("MEMREC_PROGRESS_INTERVAL_MS", "soon", 1);
    CHECK(ProgressBar::default_interval() == std::chrono::seconds(10));
    ::unsetenv("MEMREC_PROGRESS_INTERVAL_MS");
    CHECK(ProgressBar::default_interval() == std::chrono::seconds(10));
  }

  TEST_CASE("a short load prints nothing, and a disabled one nothing ever") {
    CHECK(printed([](std::FILE* f) {
            ProgressBar bar(f, true, "loading small.dat", ProgressBar::Style::kLines, std::chrono::milliseconds(10000));
            run(bar, 100);
          }).empty());
    CHECK(printed([](std::FILE* f) {
            ProgressBar bar(f, false, "loading big.dat", ProgressBar::Style::kLines, std::chrono::milliseconds(10));
            run(bar, 100);
          }).empty());
  }

  TEST_CASE("on a terminal the bar is drawn in place and erased at the end") {
    const std::string out = printed([](std::FILE* f) {
      ProgressBar bar(f, true, "loading big.dat");
      run(bar, 1300);  // drawn after a second
    });
    CAPTURE(out);
    CHECK(out.rfind("\r\x1b[Kmemrec: loading big.dat [", 0) == 0);
    CHECK(out.find('\n') == std::string::npos);
    CHECK(out.size() >= 4);
    CHECK(out.substr(out.size() - 4) == "\r\x1b[K");
  }
}

}  // namespace
}  // namespace memrec::analyzer
