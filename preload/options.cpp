// Parsing of the MEMREC_* variables (their names, defaults and meanings are in
// memrec/preload/environment.h). Runs on the first hook or in the library
// constructor, possibly before libc finished starting: getenv, no allocation.
#include "options.h"

#include <errno.h>  // program_invocation_short_name (_GNU_SOURCE)
#include <fnmatch.h>
#include <unistd.h>
#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string_view>
#include <type_traits>

#include "decimal.h"
#include "log.h"
#include "memrec/preload/environment.h"

namespace memrec::preload {

constinit Options g_options;

namespace {

bool parse_uint(const char* s, std::uint64_t max, std::uint64_t& out) {
  if (s == nullptr || *s == '\0') return false;
  std::uint64_t v = 0;
  for (; *s != '\0'; ++s) {
    if (*s < '0' || *s > '9') return false;
    v = v * 10 + static_cast<std::uint64_t>(*s - '0');
    if (v > max) return false;
  }
  out = v;
  return true;
}

bool parse_bool(const char* s, bool& out) {
  const std::string_view v(s);
  if (v == "1" || v == "yes" || v == "true" || v == "on") {
    out = true;
    return true;
  }
  if (v == "0" || v == "no" || v == "false" || v == "off" || v.empty()) {
    out = false;
    return true;
  }
  return false;
}

int parse_signal(const char* s) {
  std::string_view v(s);
  if (v == "none" || v == "0") return 0;
  std::uint64_t n = 0;
  if (parse_uint(s, 64, n)) return static_cast<int>(n);
  if (v.starts_with("SIG")) v.remove_prefix(3);
  struct Named {
    std::string_view name;
    int number;
  };
  constexpr Named kSignals[] = {{"USR1", SIGUSR1},   {"USR2", SIGUSR2}, {"HUP", SIGHUP},      {"URG", SIGURG},
                                {"WINCH", SIGWINCH}, {"PROF", SIGPROF}, {"VTALRM", SIGVTALRM}};
  for (const Named& n : kSignals) {
    if (n.name == v) return n.number;
  }
  if (v.starts_with("RTMIN+") && parse_uint(v.data() + 6, 30, n)) return SIGRTMIN + static_cast<int>(n);
  return -1;
}

void invalid(const char* name, const char* value, const char* expected) {
  log_line({name, "=", value, " is not ", expected, "; using the default"});
}

template <typename T>
void read_uint(const char* name, std::uint64_t min, std::uint64_t max, T& out) {
  const char* v = getenv(name);
  if (v == nullptr) return;
  std::uint64_t n = 0;
  if (parse_uint(v, max, n) && n >= min) {
    out = static_cast<T>(n);
  } else {
    invalid(name, v, "a number in the allowed range");
  }
}

void read_bool(const char* name, bool& out) {
  const char* v = getenv(name);
  if (v != nullptr && !parse_bool(v, out)) invalid(name, v, "0 or 1");
}

}  // namespace

void read_options() {
  Options o;
  if (const char* v = getenv(kEnvOutput.name); v != nullptr && *v != '\0') {
    if (std::strlen(v) < sizeof(o.output)) {
      std::strcpy(o.output, v);
    } else {
      invalid(kEnvOutput.name, "(too long)", "a path shorter than 1024 bytes");
    }
  }
  read_bool(kEnvStartDisabled.name, o.start_disabled);
  if (const char* v = getenv(kEnvSignal.name); v != nullptr) {
    const int sig = parse_signal(v);
    if (sig >= 0 && sig != SIGKILL && sig != SIGSTOP && sig != SIGSEGV && sig < NSIG) {
      o.toggle_signal = sig;
    } else {
      invalid(kEnvSignal.name, v, "a signal name (USR1, USR2, RTMIN+N), a number or none");
    }
  }
  read_uint(kEnvMaxDepth.name, 1, kMaxDepthLimit, o.max_depth);
  read_bool(kEnvFollowExec.name, o.follow_exec);
  read_uint(kEnvRssIntervalMs.name, 0, 3600000, o.rss_interval_ms);
  read_uint(kEnvFlushIntervalMs.name, 10, 1000, o.flush_interval_ms);
  read_bool(kEnvLossy.name, o.lossy);
  if (const char* v = getenv(kEnvZstdLevel.name); v != nullptr && std::string_view(v) == "auto") {
    o.zstd_level = 0;
  } else if (v != nullptr) {
    std::uint64_t n = 0;
    if (parse_uint(v, 19, n) && n >= 1) {
      o.zstd_level = static_cast<int>(n);
    } else {
      invalid(kEnvZstdLevel.name, v, "auto or a level from 1 to 19");
    }
  }
  if (const char* v = getenv(kEnvOnly.name); v != nullptr) {
    if (std::strlen(v) < sizeof(o.only)) {
      std::strcpy(o.only, v);
    } else {
      invalid(kEnvOnly.name, "(too long)", "a glob shorter than 256 bytes");
    }
  }
  if (const char* v = getenv(kEnvWriters.name); v != nullptr && std::string_view(v) != "auto") {
    std::uint64_t n = 0;
    if (parse_uint(v, 8, n) && n >= 1) {
      o.writers = static_cast<std::uint32_t>(n);
    } else {
      invalid(kEnvWriters.name, v, "auto or a number from 1 to 8");
    }
  }
  if (const char* v = getenv(kEnvStamp.name); v != nullptr) {
    constexpr std::string_view kNames[] = {"auto", "tsc", "counter"};
    const auto* named = std::find(std::begin(kNames), std::end(kNames), std::string_view(v));
    if (named != std::end(kNames)) {
      o.stamp = static_cast<StampChoice>(named - std::begin(kNames));
    } else {
      invalid(kEnvStamp.name, v, "auto, tsc or counter");
    }
  }
  g_options = o;
}

bool selected_by_only() {
  if (g_options.only[0] == '\0') return true;
  const char* called = program_invocation_short_name;
  if (called != nullptr && fnmatch(g_options.only, called, 0) == 0) return true;
  // A launcher may exec a program under another argv[0] (pyenv's shims run
  // python3.11 as "python3"), and a script runs its interpreter: the file's
  // own name counts too.
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return false;
  exe[n] = '\0';
  const char* slash = std::strrchr(exe, '/');
  return fnmatch(g_options.only, slash != nullptr ? slash + 1 : exe, 0) == 0;
}

// Every variable's value in force goes into the header, under its header_key.
static_assert(std::size(kEnvironment) == std::extent_v<decltype(OptionText::pairs)>);

void describe_options(OptionText& out) {
  out.count = 0;
  auto text = [&](std::string_view key, std::string_view value) { out.pairs[out.count++] = {key, value}; };
  auto number = [&](std::string_view key, std::uint64_t v) {
    const std::size_t len = format_decimal(out.storage[out.count], sizeof(out.storage[0]) - 1, v);
    text(key, std::string_view(out.storage[out.count], len));
  };
  text(kEnvOutput.header_key, g_options.output);
  number(kEnvStartDisabled.header_key, g_options.start_disabled);
  number(kEnvSignal.header_key, static_cast<std::uint64_t>(g_options.toggle_signal));
  number(kEnvMaxDepth.header_key, static_cast<std::uint64_t>(g_options.max_depth));
  number(kEnvFollowExec.header_key, g_options.follow_exec);
  number(kEnvRssIntervalMs.header_key, g_options.rss_interval_ms);
  number(kEnvFlushIntervalMs.header_key, g_options.flush_interval_ms);
  number(kEnvLossy.header_key, g_options.lossy);
  if (g_options.zstd_level == 0) {
    text(kEnvZstdLevel.header_key, "auto");
  } else {
    number(kEnvZstdLevel.header_key, static_cast<std::uint64_t>(g_options.zstd_level));
  }
  text(kEnvOnly.header_key, g_options.only);
  if (g_options.writers == 0) {
    text(kEnvWriters.header_key, "auto");
  } else {
    number(kEnvWriters.header_key, g_options.writers);
  }
  constexpr std::string_view kStampNames[] = {"auto", "tsc", "counter"};
  text(kEnvStamp.header_key, kStampNames[static_cast<std::size_t>(g_options.stamp)]);
}

}  // namespace memrec::preload
