// `memrec help env`: the MEMREC_* variables of libmemrec.so, printed from the
// preload's own table (memrec/preload/environment.h), so the text cannot drift
// from what the preload reads. scripts/reference builds the docs from it.
#pragma once

#include <ostream>

namespace memrec::analyzer {

// Prints every variable as `NAME=DEFAULT` followed by its meaning, indented by
// four spaces and wrapped at 78 columns.
void print_environment_help(std::ostream& out);

}  // namespace memrec::analyzer
