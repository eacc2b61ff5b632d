// The control socket's commands and replies (control_socket.h) and the label
// a marker keeps (recorder.h), without a socket or a writer: the actions are
// test doubles that note what the recorder was asked to do.
#include "control_socket.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "recorder.h"

using namespace memrec::preload;

namespace {

bool g_on = true;
bool g_error = false;
std::vector<std::string> g_calls;

ControlActions actions() {
  return ControlActions{
      [] { return g_on; },
      [] { return g_error; },
      [](bool on) {
        g_calls.push_back(on ? "start" : "stop");
        g_on = on;
      },
      [](std::string_view label) { g_calls.push_back("mark " + std::string(label)); },
      4242,
      "/tmp/memrec.prog.4242.dat",
  };
}

std::string reply(std::string_view command) {
  char out[512];
  const std::size_t n = control_reply(command, actions(), out, sizeof(out));
  return std::string(out, n);
}

void reset(bool on) {
  g_on = on;
  g_error = false;
  g_calls.clear();
}

}  // namespace

TEST_SUITE("preload/control_socket") {
  TEST_CASE("start and stop switch the recording and say what it was before") {
    reset(true);
    CHECK(reply("stop") == "ok: paused (was recording)");
    CHECK(reply("stop") == "ok: paused (already was)");
    CHECK(reply("start") == "ok: recording (was paused)");
    CHECK(reply("start") == "ok: recording (already was)");
    CHECK(g_calls == std::vector<std::string>{"stop", "stop", "start", "start"});
  }

  TEST_CASE("status names the state, the pid and the dump") {
    reset(false);
    CHECK(reply("status") == "paused, pid 4242, dump /tmp/memrec.prog.4242.dat");
    g_on = true;
    CHECK(reply("status") == "recording, pid 4242, dump /tmp/memrec.prog.4242.dat");
    g_error = true;
    CHECK(reply("status") == "stopped on an error, pid 4242, dump /tmp/memrec.prog.4242.dat");
    CHECK(g_calls.empty());
  }

  TEST_CASE("mark passes the whole label on, spaces included") {
    reset(true);
    CHECK(reply("mark load test: end") == "ok: marked load test: end");
    CHECK(g_calls == std::vector<std::string>{"mark load test: end"});
  }

  TEST_CASE("a bad command, an empty or too long label, or a stopped recording gets an error line") {
    reset(true);
    CHECK(reply("mark") == "error: mark needs a label: mark LABEL");
    CHECK(reply("mark ") == "error: mark needs a label: mark LABEL");
    CHECK(reply("mark " + std::string(256, 'x')) == "error: a label is at most 255 bytes");
    CHECK(reply("pause") == "error: unknown command 'pause': send start, stop, status or mark LABEL");
    g_error = true;
    CHECK(reply("start").starts_with("error: the recording stopped on an error"));
    CHECK(g_calls.empty());
  }

  TEST_CASE("the socket's name is derived from the pid") {
    char name[64];
    const std::size_t n = control_socket_name(123456, name, sizeof(name));
    CHECK(std::string(name, n) == "memrec-ctl.123456");
  }

  TEST_CASE("a marker keeps 255 bytes of a longer label, never half a UTF-8 character") {
    CHECK(marker_label_bytes("") == 0);
    CHECK(marker_label_bytes("phase-a") == 7);
    const std::string exact(255, 'a');
    CHECK(marker_label_bytes(exact.c_str()) == 255);
    const std::string longer(300, 'a');
    CHECK(marker_label_bytes(longer.c_str()) == 255);
    // "é" is two bytes: 254 'a's, then é at bytes 254 and 255 would be cut in half.
    const std::string split = std::string(254, 'a') + "\xc3\xa9" + "tail";
    CHECK(marker_label_bytes(split.c_str()) == 254);
  }
}
