// A dump's process is alive only while its pid names the process that
// started the dump; a watched directory lists its .dat files.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "load/dump_liveness.h"

using namespace memrec::analyzer;

namespace {

std::uint64_t mono_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace

TEST_SUITE("analyzer/dump_liveness") {
  TEST_CASE("this process is alive for a dump it started, not for one started before it existed") {
    const auto pid = static_cast<std::uint64_t>(getpid());
    CHECK(dump_process_alive(pid, mono_now_ns()));
    // A dump started at boot: this pid then belonged to another process.
    CHECK(!dump_process_alive(pid, 0));
  }

  TEST_CASE("a process that has exited and been reaped is not alive") {
    const std::uint64_t started = mono_now_ns();
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) _exit(0);
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    CHECK(!dump_process_alive(static_cast<std::uint64_t>(child), started));
  }

  TEST_CASE("a directory's dumps are its .dat files, by name") {
    const auto dir = std::filesystem::temp_directory_path() / ("liveness." + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    for (const char* name : {"b.2.dat", "a.1.dat", "notes.txt"}) std::ofstream(dir / name) << "x";
    std::filesystem::create_directories(dir / "c.dat");  // a directory, not a dump
    const auto found = dumps_in_directory(dir.string());
    REQUIRE(found.size() == 2);
    CHECK(found[0] == (dir / "a.1.dat").string());
    CHECK(found[1] == (dir / "b.2.dat").string());
    CHECK(dumps_in_directory((dir / "missing").string()).empty());
    std::filesystem::remove_all(dir);
  }
}
