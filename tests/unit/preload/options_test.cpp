// MEMREC_* parsing: values in range are taken, invalid ones keep the default.
#include "options.h"

#include <doctest/doctest.h>

#include <csignal>
#include <cstdlib>
#include <string>

using namespace memrec::preload;

namespace {

void clear_env() {
  for (const char* name : {"MEMREC_OUTPUT", "MEMREC_START_DISABLED", "MEMREC_SIGNAL", "MEMREC_MAX_DEPTH",
                           "MEMREC_FOLLOW_EXEC", "MEMREC_RSS_INTERVAL_MS", "MEMREC_FLUSH_INTERVAL_MS", "MEMREC_LOSSY",
                           "MEMREC_ZSTD_LEVEL", "MEMREC_WRITERS", "MEMREC_STAMP"}) {
    unsetenv(name);
  }
}

}  // namespace

TEST_SUITE("preload/options") {
  TEST_CASE("without variables every option has its default") {
    clear_env();
    read_options();
    CHECK(std::string(g_options.output) == "memrec.%e.%p.dat");
    CHECK(g_options.max_depth == 128);
    CHECK(g_options.toggle_signal == SIGUSR1);
    CHECK(g_options.follow_exec);
    CHECK_FALSE(g_options.start_disabled);
    CHECK(g_options.rss_interval_ms == 100);
  }

  TEST_CASE("valid values are taken") {
    clear_env();
    setenv("MEMREC_OUTPUT", "/tmp/x.%p.dat", 1);
    setenv("MEMREC_MAX_DEPTH", "16", 1);
    setenv("MEMREC_SIGNAL", "USR2", 1);
    setenv("MEMREC_START_DISABLED", "1", 1);
    setenv("MEMREC_FOLLOW_EXEC", "0", 1);
    read_options();
    CHECK(std::string(g_options.output) == "/tmp/x.%p.dat");
    CHECK(g_options.max_depth == 16);
    CHECK(g_options.toggle_signal == SIGUSR2);
    CHECK(g_options.start_disabled);
    CHECK_FALSE(g_options.follow_exec);
    setenv("MEMREC_SIGNAL", "none", 1);
    read_options();
    CHECK(g_options.toggle_signal == 0);
    clear_env();
  }

  TEST_CASE("the writers are auto unless a count from 1 to 8 is given") {
    // given no MEMREC_WRITERS, then auto (0)
    clear_env();
    read_options();
    CHECK(g_options.writers == 0);
    // given a count in range, then that count
    setenv("MEMREC_WRITERS", "3", 1);
    read_options();
    CHECK(g_options.writers == 3);
    // given auto, 0 or a count past 8, then auto
    for (const char* v : {"auto", "0", "9"}) {
      CAPTURE(v);
      setenv("MEMREC_WRITERS", v, 1);
      read_options();
      CHECK(g_options.writers == 0);
    }
    clear_env();
  }

  TEST_CASE("invalid values keep the default") {
    clear_env();
    setenv("MEMREC_MAX_DEPTH", "100000", 1);
    setenv("MEMREC_SIGNAL", "KILL", 1);
    setenv("MEMREC_RSS_INTERVAL_MS", "ten", 1);
    read_options();
    CHECK(g_options.max_depth == 128);
    CHECK(g_options.toggle_signal == SIGUSR1);
    CHECK(g_options.rss_interval_ms == 100);
    clear_env();
  }

  TEST_CASE("the zstd level is auto unless a level from 1 to 19 is given, and the header says which") {
    auto header_level = [] {
      OptionText text;
      describe_options(text);
      for (std::size_t i = 0; i < text.count; ++i) {
        if (text.pairs[i].key == "zstd_level") return std::string(text.pairs[i].value);
      }
      return std::string("(none)");
    };
    clear_env();
    read_options();
    CHECK(g_options.zstd_level == 0);
    CHECK(header_level() == "auto");
    for (const char* level : {"1", "19"}) {
      setenv("MEMREC_ZSTD_LEVEL", level, 1);
      read_options();
      CHECK(g_options.zstd_level == std::stoi(level));
      CHECK(header_level() == level);
    }
    setenv("MEMREC_ZSTD_LEVEL", "auto", 1);
    read_options();
    CHECK(g_options.zstd_level == 0);
    for (const char* bad : {"0", "20", "fast", ""}) {
      setenv("MEMREC_ZSTD_LEVEL", bad, 1);
      read_options();
      CHECK(g_options.zstd_level == 0);
    }
    clear_env();
  }

  TEST_CASE("the stamp is auto unless tsc or counter is given, and a wrong name keeps auto") {
    clear_env();
    read_options();
    CHECK(g_options.stamp == StampChoice::kAuto);
    setenv("MEMREC_STAMP", "tsc", 1);
    read_options();
    CHECK(g_options.stamp == StampChoice::kTsc);
    setenv("MEMREC_STAMP", "counter", 1);
    read_options();
    CHECK(g_options.stamp == StampChoice::kCounter);
    setenv("MEMREC_STAMP", "rdtsc", 1);
    read_options();
    CHECK(g_options.stamp == StampChoice::kAuto);
    OptionText text;
    describe_options(text);
    bool found = false;
    for (std::size_t i = 0; i < text.count; ++i) {
      if (text.pairs[i].key == "stamp") found = text.pairs[i].value == "auto";
    }
    CHECK(found);
    clear_env();
  }

  TEST_CASE("the header lists every option as text") {
    clear_env();
    setenv("MEMREC_MAX_DEPTH", "64", 1);
    read_options();
    OptionText text;
    describe_options(text);
    REQUIRE(text.count == 12);
    bool found = false;
    for (std::size_t i = 0; i < text.count; ++i) {
      if (text.pairs[i].key == "max_depth") found = text.pairs[i].value == "64";
    }
    CHECK(found);
    clear_env();
  }
}
