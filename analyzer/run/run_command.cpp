// The child gets LD_PRELOAD, MEMREC_OUTPUT (made absolute, so a program that
// chdir()s still writes where the user asked), MEMREC_START_DISABLED and, with
// --only, MEMREC_ONLY. The dumps are found afterwards by matching the
// template's file names in its directory against those there before the
// start: every recorded process of the tree (fork children, exec'd programs)
// writes its own file there.
#include "run/run_command.h"

#include <fnmatch.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "memrec/reader/file_header_reader.h"

#include "common/exit_codes.h"

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

std::vector<std::string> child_environment(const std::string& preload, const std::string& output,
                                           const RunOptions& options) {
  std::vector<std::string> env;
  std::string ld_preload = preload;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view var(*e);
    if (var.starts_with("MEMREC_OUTPUT=") || var.starts_with("MEMREC_START_DISABLED=")) continue;
    if (options.only && var.starts_with("MEMREC_ONLY=")) continue;
    if (var.starts_with("LD_PRELOAD=")) {
      if (var.size() > 11) ld_preload += ":" + std::string(var.substr(11));
      continue;
    }
    env.emplace_back(var);
  }
  env.push_back("LD_PRELOAD=" + ld_preload);
  env.push_back("MEMREC_OUTPUT=" + output);
  env.push_back(std::string("MEMREC_START_DISABLED=") + (options.start_disabled ? "1" : "0"));
  if (options.only) env.push_back("MEMREC_ONLY=" + *options.only);
  return env;
}

// The process a dump belongs to, from its header; nullopt if the header does
// not read (the writer failed before finishing it).
std::optional<DumpProcess> dump_process(const std::string& path) {
  constexpr std::size_t kHeaderReadBytes = 1 << 20;  // the header holds a cmdline of at most 64 KiB
  std::ifstream in(path, std::ios::binary);
  std::vector<std::byte> bytes(kHeaderReadBytes);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  const auto header = reader::parse_file_header(bytes, path);
  if (!header) return std::nullopt;
  return DumpProcess{path, header->pid, header->start_mono_ns};
}

// The closing line: how many dumps, and which one to open first.
void summarize(const std::vector<std::string>& written, const fs::path& output, std::uint64_t root_pid,
               std::ostream& err) {
  if (written.empty()) {
    err << "memrec: no dump was written under " << output.string() << "\n";
    return;
  }
  std::vector<DumpProcess> processes;
  for (const std::string& f : written) {
    if (auto p = dump_process(f)) processes.push_back(*p);
  }
  std::string main = main_dump(processes, root_pid);
  if (main.empty()) main = written.front();
  if (written.size() == 1) {
    err << "memrec: 1 dump: " << main << "\n";
  } else {
    err << "memrec: " << written.size() << " dumps in " << output.parent_path().string() << "; the main one: " << main
        << "\n";
  }
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

std::string main_dump(const std::vector<DumpProcess>& dumps, std::uint64_t root_pid) {
  const DumpProcess* best = nullptr;
  for (const DumpProcess& d : dumps) {
    if (d.pid != root_pid) continue;
    if (best == nullptr || d.start_mono_ns > best->start_mono_ns) best = &d;
  }
  if (best != nullptr) return best->path;
  for (const DumpProcess& d : dumps) {
    if (best == nullptr || d.start_mono_ns < best->start_mono_ns) best = &d;
  }
  return best != nullptr ? best->path : std::string();
}

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

  std::vector<std::string> env = child_environment(preload, output.string(), options);
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
  std::vector<std::string> written;
  for (const std::string& f : after) {
    if (before.count(f) == 0) written.push_back(f);
  }
  summarize(written, output, static_cast<std::uint64_t>(pid), err);
  err.flush();
  return code;
}

}  // namespace memrec::analyzer
