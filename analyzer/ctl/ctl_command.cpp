// The client half of the control channel (docs/design/control_channel.md):
// finds the process, checks it is the caller's, connects to the abstract
// socket derived from its pid, checks that the socket is that process's, and
// relays one command line and its one-line reply.
#include "ctl/ctl_command.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstddef>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "common/exit_codes.h"
#include "memrec/format/records.h"
#include "memrec/preload/control.h"

namespace memrec::analyzer {
namespace {

// The recorder answers within its poll interval (milliseconds); a process
// stopped or stuck in a long backpressure wait does not.
constexpr int kReplyTimeoutMs = 5000;

class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

int fail(std::ostream& err, const std::string& message) {
  err << "memrec: ctl: " << message << "\n";
  return kExitBadInput;
}

// The state letter of /proc/PID/stat ('R', 'S', 'T', 'Z', ...), or 0.
char process_state(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() ? stat[close + 2] : 0;
}

// Why `pid` cannot be commanded, or empty.
std::string process_problem(pid_t pid) {
  struct stat st {};
  if (stat(fmt::format("/proc/{}", pid).c_str(), &st) != 0) {
    return fmt::format("no process {} (it exited, or the pid is wrong)", pid);
  }
  if (geteuid() != 0 && st.st_uid != geteuid()) {
    return fmt::format("process {} belongs to another user (uid {}): memrec ctl controls only your own processes", pid,
                       st.st_uid);
  }
  const char state = process_state(pid);
  if (state == 'Z' || state == 'X') return fmt::format("process {} has exited (its parent has not reaped it)", pid);
  if (state == 'T' || state == 't') {
    return fmt::format("process {} is stopped: its recorder cannot answer until it continues (kill -CONT {})", pid,
                       pid);
  }
  return {};
}

std::string no_socket(pid_t pid) {
  return fmt::format(
      "process {} has no memrec control socket: it does not run under libmemrec.so, its recording has ended, or "
      "its recorder has not started its writer yet (it does at the program's 32nd allocation or second thread)",
      pid);
}

}  // namespace

std::optional<std::string> ctl_request(const CtlOptions& o, std::ostream& err) {
  if (o.command == "start" || o.command == "stop" || o.command == "status") {
    if (!o.label.empty()) {
      err << "memrec: ctl: " << o.command << " takes no argument\n";
      return std::nullopt;
    }
    return o.command;
  }
  if (o.command == "mark") {
    std::string label;
    for (const std::string& word : o.label) label += (label.empty() ? "" : " ") + word;
    if (label.empty()) {
      err << "memrec: ctl: mark needs a label (memrec ctl PID mark LABEL)\n";
      return std::nullopt;
    }
    if (label.size() > format::kMaxMarkerLabelBytes || label.find('\n') != std::string::npos) {
      err << "memrec: ctl: a label is one line of at most " << format::kMaxMarkerLabelBytes << " bytes\n";
      return std::nullopt;
    }
    return "mark " + label;
  }
  err << "memrec: ctl: unknown command '" << o.command << "': start, stop, status or mark LABEL\n";
  return std::nullopt;
}

int run_ctl(const CtlOptions& o, std::ostream& out, std::ostream& err) {
  int pid_value = 0;
  const auto [end, ec] = std::from_chars(o.pid.data(), o.pid.data() + o.pid.size(), pid_value);
  if (o.pid.empty() || ec != std::errc() || end != o.pid.data() + o.pid.size() || pid_value <= 0) {
    err << "memrec: ctl: '" << o.pid << "' is not a process id (a whole number from 1)\n";
    return kExitUsage;
  }
  const auto request = ctl_request(o, err);
  if (!request) return kExitUsage;
  const auto pid = static_cast<pid_t>(pid_value);
  if (const std::string problem = process_problem(pid); !problem.empty()) return fail(err, problem);

  Socket s(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (s.fd() < 0) return fail(err, fmt::format("cannot create a socket: {}", std::strerror(errno)));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string name = fmt::format("{}{}", preload::kControlSocketPrefix, pid);
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  const auto addr_len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (connect(s.fd(), reinterpret_cast<const sockaddr*>(&addr), addr_len) != 0) {
    if (errno == ECONNREFUSED || errno == ENOENT) return fail(err, no_socket(pid));
    return fail(err, fmt::format("cannot connect to process {}'s control socket: {}", pid, std::strerror(errno)));
  }
  // Anyone may bind an abstract name: the socket must be the process's own.
  ucred cred{};
  socklen_t cred_len = sizeof(cred);
  if (getsockopt(s.fd(), SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) != 0 || cred.pid != pid) {
    return fail(err, fmt::format("the control socket named for process {} is held by process {}: not sending to it",
                                 pid, cred.pid));
  }
  const std::string line = *request + "\n";
  if (send(s.fd(), line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size())) {
    return fail(err, fmt::format("cannot send to process {}: {}", pid, std::strerror(errno)));
  }
  std::string reply;
  char buf[512];
  while (reply.find('\n') == std::string::npos) {
    pollfd p{s.fd(), POLLIN, 0};
    if (poll(&p, 1, kReplyTimeoutMs) <= 0) {
      return fail(err, fmt::format("process {} did not answer within {} s (busy, stopped, or its recording ended)", pid,
                                   kReplyTimeoutMs / 1000));
    }
    const ssize_t n = recv(s.fd(), buf, sizeof(buf), 0);
    if (n <= 0) break;
    reply.append(buf, static_cast<std::size_t>(n));
  }
  if (const std::size_t nl = reply.find('\n'); nl != std::string::npos) reply.resize(nl);
  if (reply.empty()) return fail(err, fmt::format("process {} closed the connection without an answer", pid));
  if (reply.starts_with("error: ")) return fail(err, fmt::format("process {}: {}", pid, reply.substr(7)));
  out << reply << "\n";
  return kExitOk;
}

}  // namespace memrec::analyzer
