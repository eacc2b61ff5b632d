// Each `memrec` command's entry from main.cpp: parses the command's own
// arguments (those after its name), prints its --help or runs it, and returns
// the exit code (common/exit_codes.h). One cli/<command>_cli.cpp each.
#pragma once

#include <string>
#include <vector>

namespace memrec::analyzer {

int info_main(const std::vector<std::string>& args);
int report_main(const std::vector<std::string>& args);
int run_main(const std::vector<std::string>& args);
int view_main(const std::vector<std::string>& args);
// `memrec ctl PID COMMAND...` and `memrec mark PID LABEL`.
int export_main(const std::vector<std::string>& args);
int diff_main(const std::vector<std::string>& args);
int ctl_main(const std::vector<std::string>& args);
int mark_main(const std::vector<std::string>& args);

}  // namespace memrec::analyzer
