// pprof's ?seconds=N on a dump still being followed: which requests wait,
// for which window, and when the wait is over (view_pprof.cpp; the waiting
// itself is http_server.cpp's, tested in tests/integration/test_view_follow_table.py).
#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <string>
#include <variant>

#include "server/view_api.h"

using namespace memrec::analyzer;
using namespace memrec::analyzer::server;

namespace {

constexpr std::uint64_t kStart = 5'000'000'000;
constexpr std::uint64_t kSecond = 1'000'000'000;

ViewData one_dump(std::optional<std::uint64_t> edge_ns) {
  ViewData data;
  data.dumps.emplace_back();
  ViewDump& d = data.dumps.back();
  d.report.dump.header.start_mono_ns = kStart;
  d.report.duration_ns = 7 * kSecond;
  d.followed_edge_ns = edge_ns;
  return data;
}

ParamFn params(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    const auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

std::optional<PprofLiveWindow> window_of(const ViewData& data, std::map<std::string, std::string> values) {
  auto window = pprof_live_window(data, params(std::move(values)));
  REQUIRE(std::holds_alternative<std::optional<PprofLiveWindow>>(window));
  return std::get<std::optional<PprofLiveWindow>>(window);
}

}  // namespace

TEST_SUITE("server/view_pprof") {
  TEST_CASE("seconds on a followed dump without at waits for the next seconds from its end") {
    const ViewData data = one_dump(kStart + 6 * kSecond);
    const auto window = window_of(data, {{"seconds", "2"}});
    REQUIRE(window.has_value());
    CHECK(window->dump == 0);
    CHECK(window->from_ns == 7 * kSecond);
    CHECK(window->to_ns == 9 * kSecond);
  }

  TEST_CASE("no wait without seconds, with at, or on a dump no longer followed") {
    CHECK(!window_of(one_dump(kStart + 6 * kSecond), {}).has_value());
    CHECK(!window_of(one_dump(kStart + 6 * kSecond), {{"seconds", "2"}, {"at", "3s"}}).has_value());
    CHECK(!window_of(one_dump(std::nullopt), {{"seconds", "2"}}).has_value());
  }

  TEST_CASE("more seconds than the cap on a followed dump is a 400 saying what to do") {
    const auto window = pprof_live_window(one_dump(kStart), params({{"seconds", "61"}}));
    REQUIRE(std::holds_alternative<ApiError>(window));
    CHECK(std::get<ApiError>(window).status == 400);
    CHECK(std::get<ApiError>(window).message.find("at most 60 s") != std::string::npos);
    // an ended dump's last 61 seconds need no wait: no cap
    CHECK(!window_of(one_dump(std::nullopt), {{"seconds", "61"}}).has_value());
  }

  TEST_CASE("the wait is over once every event up to the window's end is in, or the dump is no longer followed") {
    const PprofLiveWindow window{0, 7 * kSecond, 9 * kSecond};
    CHECK(!pprof_window_complete(one_dump(kStart + 8 * kSecond), window));
    CHECK(!pprof_window_complete(one_dump(kStart + 9 * kSecond), window));  // events at the end may still come
    CHECK(pprof_window_complete(one_dump(kStart + 9 * kSecond + 1), window));
    CHECK(pprof_window_complete(one_dump(std::nullopt), window));
  }
}
