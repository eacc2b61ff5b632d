// The control socket: `memrec ctl PID start|stop|status|mark LABEL` talks to
// the recorder through it (docs/design/control_channel.md). Only the writer
// thread calls these, and only in its own descriptor table: the program never
// sees the socket, and never a hooked call waits on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace memrec::preload {

// The abstract name of `pid`'s socket, without its leading NUL:
// "memrec-ctl.<pid>". Returns its length (at most `cap`).
std::size_t control_socket_name(std::uint64_t pid, char* out, std::size_t cap);

// Listens on `pid`'s name. Does nothing unless the writer has a descriptor
// table of its own; reports a name taken by someone else once on stderr.
void control_listen(std::uint64_t pid);
// Answers the clients waiting, at most every few milliseconds.
void control_serve(std::uint64_t now_ns);
// Stops listening (the writer ends or parks).
void control_close();
// In a fork child: the parent's socket was in its writer's table, which the
// child does not have; forget its number without closing anything.
void control_forget_after_fork();

// The reply to one command line (no newline), written to `out`; returns its
// length. What the commands do goes through these writer-side functions.
struct ControlActions {
  bool (*recording)();                   // allocations recorded now
  bool (*stopped)();                     // the recording ended on an error
  void (*set_recording)(bool on);        // start or stop, noted as from ctl
  void (*mark)(std::string_view label);  // a marker from ctl, stamped now
  std::uint64_t pid;
  std::string_view dump_path;
};
std::size_t control_reply(std::string_view command, const ControlActions& actions, char* out, std::size_t cap);

}  // namespace memrec::preload
