// Loads each file, builds its report and prints it. A file that fails does
// not stop the others; the exit code says that one did.
#include "reports/info_command.h"

#include <nlohmann/json.hpp>

#include "common/exit_codes.h"
#include "load/dump_loader.h"
#include "reports/info_report.h"

namespace memrec::analyzer {

int run_info(const InfoOptions& options, std::ostream& out, std::ostream& err) {
  int status = kExitOk;
  nlohmann::json reports = nlohmann::json::array();
  bool first_text = true;
  for (const std::string& path : options.files) {
    auto built = build_info_report(path, LoadOptions{options.threads});
    if (!built) {
      err << "memrec: " << built.error().message << "\n";
      const int code = built.error().code == ErrorCode::kInternal ? kExitInternal : kExitBadInput;
      status = std::max(status, code);
      continue;
    }
    const InfoReport& report = *built;
    if (options.json) {
      reports.push_back(info_json(report));
    } else {
      if (!first_text) out << "\n";
      first_text = false;
      out << info_text(report, options.top_leaks);
    }
  }
  if (options.json && !reports.empty()) {
    const nlohmann::json& doc = options.files.size() == 1 ? reports[0] : reports;
    // Paths and thread names are the kernel's bytes, not promised UTF-8.
    out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  out.flush();
  return status;
}

}  // namespace memrec::analyzer
