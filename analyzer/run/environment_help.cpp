// The text of `memrec help env`. Its shape (a `NAME=DEFAULT` line, then the
// meaning indented by four spaces) is what scripts/reference parses.
#include "run/environment_help.h"

#include <string_view>

#include "memrec/preload/environment.h"

namespace memrec::analyzer {
namespace {

constexpr std::size_t kWidth = 78;
constexpr std::string_view kIndent = "    ";

// Writes `text` as lines of at most kWidth columns (a longer word gets a line
// of its own), each starting with kIndent.
void print_wrapped(std::ostream& out, std::string_view text) {
  std::size_t column = 0;
  while (!text.empty()) {
    const std::size_t space = text.find(' ');
    const std::string_view word = text.substr(0, space);
    text = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
    if (word.empty()) continue;
    if (column != 0 && column + 1 + word.size() > kWidth) {
      out << '\n';
      column = 0;
    }
    if (column == 0) {
      out << kIndent << word;
      column = kIndent.size() + word.size();
    } else {
      out << ' ' << word;
      column += 1 + word.size();
    }
  }
  if (column != 0) out << '\n';
}

}  // namespace

void print_environment_help(std::ostream& out) {
  out << "usage: memrec help env\n\n"
         "The environment variables that libmemrec.so reads once, when a program starts,\n"
         "shown as NAME=DEFAULT. An invalid value prints one line starting with\n"
         "\"memrec:\" and the default is used; every dump's header records the values in\n"
         "force (`memrec info` shows them as its options).\n";
  for (const preload::EnvironmentVariable& v : preload::kEnvironment) {
    out << '\n' << v.name << '=' << v.default_text << '\n';
    print_wrapped(out, v.meaning);
  }
}

}  // namespace memrec::analyzer
