// The control socket's server half (control_socket.h). Cold: the writer
// thread polls it every few milliseconds between its cycles, in its own
// descriptor table (fd_guard.h), so nothing here touches the program's
// descriptors, signals or threads.
#include "control_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "decimal.h"
#include "fd_guard.h"
#include "log.h"
#include "memrec/format/records.h"
#include "memrec/preload/control.h"
#include "recorder_state.h"
#include "writer.h"

namespace memrec::preload {
namespace {

// accept4() is a syscall: a busy writer cycles every few tens of
// microseconds, and a person typing `memrec ctl` waits no less than this.
constexpr std::uint64_t kServeEveryNs = 10'000'000;
// How long a connected client may take to send its command line: the writer
// drains the rings meanwhile only in the program's other threads' absence.
constexpr int kReadTimeoutMs = 200;
constexpr std::size_t kMaxCommandBytes = 16 + format::kMaxMarkerLabelBytes;
constexpr int kMaxClientsPerServe = 4;

int g_listen_fd = -1;  // in the writer's own table
std::uint64_t g_last_serve_ns = 0;

std::size_t put(char* out, std::size_t cap, std::size_t at, std::string_view s) {
  const std::size_t n = s.size() < cap - at ? s.size() : cap - at;
  std::memcpy(out + at, s.data(), n);
  return at + n;
}

bool peer_allowed(int fd) {
  struct ucred cred {};
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return false;
  // An abstract socket has no file mode: anyone in the network namespace
  // may connect. Only the process's owner (and root, who could ptrace it
  // anyway) may command it.
  return cred.uid == geteuid() || cred.uid == getuid() || cred.uid == 0;
}

// One line from `fd`, without its newline; false if none came in time.
bool read_line(int fd, char* buf, std::size_t cap, std::size_t& len) {
  len = 0;
  while (len < cap) {
    struct pollfd p {
      fd, POLLIN, 0
    };
    if (poll(&p, 1, kReadTimeoutMs) <= 0) return false;
    const ssize_t n = recv(fd, buf + len, cap - len, 0);
    if (n <= 0) return len > 0;  // a client that closed after its command without a newline
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[len + static_cast<std::size_t>(i)] == '\n') {
        len += static_cast<std::size_t>(i);
        return true;
      }
    }
    len += static_cast<std::size_t>(n);
  }
  return true;  // over-long: the command parser says so
}

void answer(int fd, const ControlActions& actions) {
  char reply[512];
  std::size_t n;
  if (!peer_allowed(fd)) {
    n = put(reply, sizeof(reply) - 1, 0,
            "error: permission denied: only the process's owner may control its recording");
  } else {
    char line[kMaxCommandBytes + 1];
    std::size_t len = 0;
    if (!read_line(fd, line, sizeof(line), len)) {
      n = put(reply, sizeof(reply) - 1, 0, "error: no command received");
    } else {
      if (len > 0 && line[len - 1] == '\r') --len;
      n = control_reply(std::string_view(line, len), actions, reply, sizeof(reply) - 1);
    }
  }
  reply[n++] = '\n';
  // MSG_NOSIGNAL: a client gone already must not raise SIGPIPE in the process.
  (void)send(fd, reply, n, MSG_NOSIGNAL | MSG_DONTWAIT);
}

bool writer_recording() { return recording_allocs(); }
bool writer_stopped() { return g_state.load(std::memory_order_relaxed) == RecorderState::kStopped; }

void writer_set_recording(bool on) {
  if (g_enabled.load(std::memory_order_relaxed) == on) return;
  g_enabled.store(on, std::memory_order_relaxed);
  note_recording_toggle(on, writer_control_stamp(), format::Source::kCtl);
}

void writer_mark(std::string_view label) { writer_put_marker(format::Source::kCtl, label); }

}  // namespace

std::size_t control_socket_name(std::uint64_t pid, char* out, std::size_t cap) {
  const std::size_t at = put(out, cap, 0, kControlSocketPrefix);
  return at + format_decimal(out + at, cap - at, pid);
}

void control_listen(std::uint64_t pid) {
  if (g_listen_fd >= 0 || !has_private_descriptors()) return;
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  struct sockaddr_un addr {};
  addr.sun_family = AF_UNIX;
  // sun_path[0] stays NUL: an abstract name, gone with the last descriptor.
  const std::size_t len = control_socket_name(pid, addr.sun_path + 1, sizeof(addr.sun_path) - 1);
  const auto addr_len = static_cast<socklen_t>(offsetof(struct sockaddr_un, sun_path) + 1 + len);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&addr), addr_len) != 0 || listen(fd, 8) != 0) {
    const int err = errno;
    close(fd);
    log_line({"no control socket for pid ", pid, ": ", errno_text(err),
              " (another process holds its name); memrec ctl cannot reach this process"});
    return;
  }
  g_listen_fd = fd;
  g_last_serve_ns = 0;
}

void control_serve(std::uint64_t now_ns) {
  if (g_listen_fd < 0 || now_ns - g_last_serve_ns < kServeEveryNs) return;
  g_last_serve_ns = now_ns;
  const ControlActions actions{writer_recording, writer_stopped, writer_set_recording,
                               writer_mark,      recorded_pid(), writer_dump_path()};
  for (int i = 0; i < kMaxClientsPerServe; ++i) {
    const int client = accept4(g_listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) return;
    answer(client, actions);
    close(client);
  }
}

void control_close() {
  if (g_listen_fd < 0) return;
  close(g_listen_fd);
  g_listen_fd = -1;
}

void control_forget_after_fork() { g_listen_fd = -1; }

std::size_t control_reply(std::string_view command, const ControlActions& a, char* out, std::size_t cap) {
  std::size_t n = 0;
  const auto state = [&] { return a.recording() ? std::string_view("recording") : std::string_view("paused"); };
  if (a.stopped() && command != "status") {
    return put(out, cap, 0, "error: the recording stopped on an error; nothing can change it now");
  }
  if (command == "start" || command == "stop") {
    const bool on = command == "start";
    const bool was = a.recording();
    a.set_recording(on);
    n = put(out, cap, 0, "ok: ");
    n = put(out, cap, n, on ? "recording" : "paused");
    return put(out, cap, n, was == on ? " (already was)" : (on ? " (was paused)" : " (was recording)"));
  }
  if (command == "status") {
    n = put(out, cap, 0, a.stopped() ? std::string_view("stopped on an error") : state());
    n = put(out, cap, n, ", pid ");
    char digits[20];
    n = put(out, cap, n, std::string_view(digits, format_decimal(digits, sizeof(digits), a.pid)));
    n = put(out, cap, n, ", dump ");
    return put(out, cap, n, a.dump_path);
  }
  if (command.starts_with("mark ") || command == "mark") {
    std::string_view label = command.substr(command.size() > 4 ? 5 : 4);
    if (label.empty()) return put(out, cap, 0, "error: mark needs a label: mark LABEL");
    if (label.size() > format::kMaxMarkerLabelBytes) {
      return put(out, cap, 0, "error: a label is at most 255 bytes");
    }
    a.mark(label);
    n = put(out, cap, 0, "ok: marked ");
    return put(out, cap, n, label);
  }
  n = put(out, cap, 0, "error: unknown command '");
  n = put(out, cap, n, command.substr(0, 64));
  return put(out, cap, n, "': send start, stop, status or mark LABEL");
}

}  // namespace memrec::preload
