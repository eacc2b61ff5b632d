// memrec view's loads, run while it already serves (view_command.cpp starts
// them once the server listens): each dump's report pass, then, for a dump
// served before its allocation table, the table's pass. Up to
// LoadBudget::at_once passes run at a time, report passes first and the
// smallest file first, so each dump is served as soon as it can be. A pass
// builds its ViewDump off the lock and swaps it in under
// ViewData::follow_lock; a dump that fails is marked so and the others go on.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "server/load_board.h"
#include "server/view_api.h"
#include "server/view_command.h"
#include "symbolize/symbolizer.h"

namespace memrec::analyzer {

// How many passes run at once and how many decoding threads each gets: the
// --threads budget (0: one per core, at most 8) split between them, at least
// one each. Each pass's memory is its decoding window, the dump's stacks and
// its table (on disk with --spill-dir), not the file's size.
struct LoadBudget {
  unsigned at_once = 1;
  unsigned threads_each = 0;
};
LoadBudget load_budget(std::size_t dumps, unsigned threads);

class ViewLoads {
 public:
  // `on_reports_done(served)` is called once, on a loader thread, after the
  // last report pass: how many dumps are served (0: every one failed).
  ViewLoads(server::ViewData& data, const ViewOptions& options, std::ostream& err,
            std::function<void(std::size_t served)> on_reports_done);
  // Lets running passes finish, starts no other.
  ~ViewLoads();
  ViewLoads(const ViewLoads&) = delete;
  ViewLoads& operator=(const ViewLoads&) = delete;

  // Loads dumps `ids` of `data` (their DumpLoad says loading).
  void start(const std::vector<std::size_t>& ids);

 private:
  struct Pass {
    std::size_t dump = 0;
    bool table = false;  // the table's pass of a dump served before it
  };
  void work(std::stop_token stop);
  void report_pass(std::size_t i);
  Result<server::ViewDump> view_dump(const std::string& path, bool early, LoadOptions& load);
  void table_pass(std::size_t i);
  void publish_warnings();

  server::ViewData& data_;
  const ViewOptions& options_;
  std::ostream& err_;
  std::function<void(std::size_t)> on_reports_done_;
  LoadBudget budget_;
  Symbolizer symbolizer_;  // thread-safe: the passes share its cache
  LoadBoard board_;
  std::string hold_dir_;  // MEMREC_VIEW_HOLD_DIR: a test knob (view_loads.cpp)

  std::mutex mu_;
  std::condition_variable_any wake_;
  std::deque<Pass> reports_;  // smallest file first
  std::deque<Pass> tables_;
  std::size_t running_reports_ = 0;
  std::size_t served_ = 0;
  std::mutex err_mu_;  // one line at a time on err_
  std::vector<std::jthread> workers_;
};

}  // namespace memrec::analyzer
