// The command lines of `memrec export` and `memrec diff` (Boost.Program_options),
// kept out of main.cpp, which only dispatches to them. Linked into the
// memrec executable only: the core library does not depend on Boost.
#pragma once

#include <string>
#include <vector>

namespace memrec::analyzer {

int export_main(const std::vector<std::string>& args);
int diff_main(const std::vector<std::string>& args);

}  // namespace memrec::analyzer
