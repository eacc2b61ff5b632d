// The child gets LD_PRELOAD, MEMREC_OUTPUT (made absolute, so a program that
// chdir()s still writes where the user asked) and MEMREC_START_DISABLED. The
// dumps are found afterwards by matching the template's file names in its
// directory against those there before the start: every process of the tree
// (fork children, exec'd programs) writes its own file there.
#include "run/run_command.h"

#include <fnmatch.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "exit_codes.h"

#ifndef MEMREC_PRELOAD_FROM_BINDIR
#define MEMREC_PRELOAD_FROM_BINDIR "../lib/memrec/libmemrec.so"
#endif

extern char** environ;

namespace memrec::analyzer {
namespace {

namespace fs = std::filesystem;

// The template's file name as an fnmatch() pattern: every %x is "*".
std::string name_pattern(const std::string& name) {
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '%' && i + 1 < name.size()) {
      ++i;
      out += name[i] == '%' ? std::string("%") : std::string("*");
    } else if (c == '*' || c == '?' || c == '[' || c == '\\') {
      out += '\\';
      out += c;
    } else {
      out += c;
    }
  }
  return out;
}

std::set<std::string> matching_files(const fs::path& dir, const std::string& pattern) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec) && fnmatch(pattern.c_str(), entry.path().filename().c_str(), 0) == 0) {
      out.insert(entry.path().string());
    }
  }
  return out;
}

std::vector<std::string> child_environment(const std::string& preload, const std::string& output, bool disabled) {
  std::vector<std::string> env;
  std::string ld_preload = preload;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view var(*e);
    if (var.starts_with("MEMREC_OUTPUT=") || var.starts_with("MEMREC_START_DISABLED=")) continue;
    if (var.starts_with("LD_PRELOAD=")) {
      if (var.size() > 11) ld_preload += ":" + std::string(var.substr(11));
      continue;
    }
    env.emplace_back(var);
  }
  env.push_back("LD_PRELOAD=" + ld_preload);
  env.push_back("MEMREC_OUTPUT=" + output);
  env.push_back(std::string("MEMREC_START_DISABLED=") + (disabled ? "1" : "0"));
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Waits for `pid`, retrying on EINTR; the exit status as a shell reports it.
int wait_exit_code(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return kExitInternal;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kExitInternal;
}

}  // namespace

std::vector<std::string> preload_candidates(const std::string& self_exe) {
  const fs::path dir = fs::path(self_exe).parent_path();
  std::vector<std::string> out;
  out.push_back((dir.parent_path() / "preload" / "libmemrec.so").string());
  const fs::path installed(MEMREC_PRELOAD_FROM_BINDIR);
  out.push_back((installed.is_absolute() ? installed : dir / installed).lexically_normal().string());
  return out;
}

int run_command(const RunOptions& options, std::ostream& err) {
  std::string preload;
  if (options.preload) {
    preload = fs::absolute(*options.preload).string();
    if (!fs::is_regular_file(preload)) {
      err << "memrec: run: --preload " << *options.preload << " is not a file\n";
      return kExitBadInput;
    }
  } else {
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    for (const std::string& c : preload_candidates(self.string())) {
      if (fs::is_regular_file(c, ec)) {
        preload = c;
        break;
      }
    }
    if (preload.empty()) {
      err << "memrec: run: libmemrec.so is neither in the build tree nor where it is installed"
             " next to this memrec; pass --preload PATH\n";
      return kExitBadInput;
    }
  }
  const fs::path output = fs::absolute(options.output);
  if (output.filename().empty()) {
    err << "memrec: run: --output " << options.output << " names a directory, not a file template\n";
    return kExitUsage;
  }
  const fs::path out_dir = output.parent_path();
  const std::string pattern = name_pattern(output.filename().string());
  const std::set<std::string> before = matching_files(out_dir, pattern);

  std::vector<std::string> env = child_environment(preload, output.string(), options.start_disabled);
  std::vector<std::string> argv = options.command;
  std::vector<char*> c_env = c_strings(env);
  std::vector<char*> c_argv = c_strings(argv);

  // Like a shell: the terminal's ^C and ^\ go to the whole foreground group;
  // memrec waits for the program to handle them and reports how it ended.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction old_int {
  }, old_quit{};
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  const pid_t pid = fork();
  if (pid == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    execvpe(c_argv[0], c_argv.data(), c_env.data());
    const int e = errno;
    const std::string msg = "memrec: run: cannot start " + argv[0] + ": " + std::strerror(e) + "\n";
    (void)!write(STDERR_FILENO, msg.data(), msg.size());
    _exit(e == ENOENT ? 127 : 126);
  }
  if (pid < 0) {
    err << "memrec: run: fork failed: " << std::strerror(errno) << "\n";
    return kExitInternal;
  }
  const int code = wait_exit_code(pid);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);

  const std::set<std::string> after = matching_files(out_dir, pattern);
  std::size_t written = 0;
  for (const std::string& f : after) {
    if (before.count(f) != 0) continue;
    err << "memrec: dump written to " << f << "\n";
    ++written;
  }
  if (written == 0) err << "memrec: no dump was written under " << output.string() << "\n";
  err.flush();
  return code;
}

}  // namespace memrec::analyzer
