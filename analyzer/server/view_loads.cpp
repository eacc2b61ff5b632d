// A large dump is served as soon as its report is ready, and its table is
// built behind the page by a second pass over the file: the table's builder
// is the slowest part of a load (a 2 GB dump: 32 s for the report alone, 90 s
// with the table), and the whole run's figures, call sites and flamegraphs
// need only the report, the whole run's timeline only the report's pass
// (model/heap_timeline.h). A small dump's table is built in the report's pass.
//
// Passes never throw out of a loader thread: there an exception would end
// the server, not just one dump.
#include "server/view_loads.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>

#include "load/spill_buffer.h"

namespace memrec::analyzer {
namespace {

using Clock = std::chrono::steady_clock;

long long ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count();
}

std::string seconds_since(Clock::time_point start) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", static_cast<double>(ms_between(start, Clock::now())) / 1000);
  return text;
}

std::uint64_t file_bytes(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

bool serves_early(const ViewOptions& options, const std::string& path) {
  switch (options.serve_early) {
    case ServeEarly::kAlways:
      return true;
    case ServeEarly::kNever:
      return false;
    case ServeEarly::kAuto:
      break;
  }
  return file_bytes(path) > kServeEarlyBytes;
}

std::string too_many_rows(const std::string& path) {
  return path + " holds more than " + std::to_string(AllocationTableBuilder::kMaxRows) +
         " allocations, more than the view's table can index; memrec report reads it, and memrec export "
         "without filters";
}

// Finishes the table and indexes it by the report's sites; MEMREC_VIEW_STATS
// prints what that took.
void publish_table(server::ViewDump& dump, AllocationTableBuilder& builder, std::ostream& err) {
  const auto streamed = Clock::now();
  AllocationTable table = builder.finish();
  const auto finished = Clock::now();
  table.set_sites(dump.report.sites.site_of_stack, static_cast<std::uint32_t>(dump.report.sites.sites.size()));
  const auto indexed = Clock::now();
  if (std::getenv("MEMREC_VIEW_STATS") != nullptr) {
    const std::string& path = dump.report.dump.path;
    err << "memrec: view: " << path << ": " << table.rows() << " allocations, table " << table.memory_bytes()
        << " bytes (" << (table.rows() == 0 ? 0 : table.memory_bytes() / table.rows()) << " a row)\n"
        << "memrec: view: " << path << ": after the pass: the table's finish " << ms_between(streamed, finished)
        << " ms, its per-site index " << ms_between(finished, indexed) << " ms\n";
  }
  dump.slot->publish(std::move(table));
}

// A test knob, so a test sees a dump still loading without a dump large
// enough to take a while: with MEMREC_VIEW_HOLD_DIR=DIR, the report pass of
// FILE waits half-way through its frames while DIR/<FILE's name>.hold exists.
void hold_while_asked(const std::string& dir, const std::string& path) {
  if (dir.empty()) return;
  const std::filesystem::path gate =
      std::filesystem::path(dir) / (std::filesystem::path(path).filename().string() + ".hold");
  std::error_code ec;
  while (std::filesystem::exists(gate, ec)) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

}  // namespace

LoadBudget load_budget(std::size_t dumps, unsigned threads) {
  const unsigned cores = threads != 0 ? threads : std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
  LoadBudget b;
  b.at_once = static_cast<unsigned>(std::clamp<std::size_t>(dumps, 1, cores));
  b.threads_each = std::max(1u, cores / b.at_once);
  return b;
}

ViewLoads::ViewLoads(server::ViewData& data, const ViewOptions& options, std::ostream& err,
                     std::function<void(std::size_t)> on_reports_done)
    : data_(data),
      options_(options),
      err_(err),
      on_reports_done_(std::move(on_reports_done)),
      budget_(load_budget(options.files.size(), options.threads)),
      symbolizer_(SymbolizerOptions{options.debug_dirs, 0}),
      board_(options.progress, options.files.size(), budget_.at_once) {
  if (const char* dir = std::getenv("MEMREC_VIEW_HOLD_DIR")) hold_dir_ = dir;
}

ViewLoads::~ViewLoads() {
  for (std::jthread& w : workers_) w.request_stop();
  wake_.notify_all();
  workers_.clear();  // joins
}

void ViewLoads::start(const std::vector<std::size_t>& ids) {
  std::vector<std::pair<std::uint64_t, std::size_t>> by_size;
  for (const std::size_t i : ids) by_size.emplace_back(file_bytes(data_.loads[i]->path()), i);
  std::stable_sort(by_size.begin(), by_size.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  {
    const std::lock_guard lock(mu_);
    for (const auto& [bytes, i] : by_size) reports_.push_back(Pass{i, false});
  }
  if (ids.empty()) {
    on_reports_done_(0);
    return;
  }
  for (unsigned n = 0; n < budget_.at_once; ++n) {
    workers_.emplace_back([this](std::stop_token stop) { work(stop); });
  }
}

void ViewLoads::work(std::stop_token stop) {
  for (;;) {
    Pass pass;
    {
      std::unique_lock lock(mu_);
      // Report passes first: a table's pass waits behind every dump not yet served.
      wake_.wait(lock, stop, [&] { return !reports_.empty() || !tables_.empty() || running_reports_ == 0; });
      if (stop.stop_requested()) return;
      if (!reports_.empty()) {
        pass = reports_.front();
        reports_.pop_front();
        ++running_reports_;
      } else if (!tables_.empty()) {
        pass = tables_.front();
        tables_.pop_front();
      } else {
        return;  // nothing queued and no report pass left to queue a table's
      }
    }
    if (pass.table) {
      table_pass(pass.dump);
      continue;
    }
    report_pass(pass.dump);
    bool last = false;
    std::size_t served = 0;
    {
      const std::lock_guard lock(mu_);
      --running_reports_;
      last = running_reports_ == 0 && reports_.empty();
      served = served_;
    }
    wake_.notify_all();
    if (last) on_reports_done_(served);
  }
}

// The symbolizer's and the spill directory's warnings not given yet, on err
// and in the dump list.
void ViewLoads::publish_warnings() {
  std::vector<std::string> all = symbolizer_.warnings();
  const std::vector<std::string> spill = spill_warnings();
  all.insert(all.end(), spill.begin(), spill.end());
  const std::set<std::string> unique(all.begin(), all.end());
  std::vector<std::string> fresh;
  {
    const std::unique_lock lock(*data_.follow_lock);
    for (const std::string& w : unique) {
      if (std::find(data_.warnings.begin(), data_.warnings.end(), w) != data_.warnings.end()) continue;
      data_.warnings.push_back(w);
      fresh.push_back(w);
    }
  }
  const std::lock_guard lock(err_mu_);
  for (const std::string& w : fresh) err_ << "memrec: " << w << "\n";
}

// The report's pass over `path`: the dump as served, its table too unless
// `early`. `err` takes the note of a corrupt frame the view stops at.
Result<server::ViewDump> ViewLoads::view_dump(const std::string& path, bool early, LoadOptions& load) {
  AllocationTableBuilder table;
  const auto start = dump_start_ns(path);
  if (!start) return start.error();
  // Served before its table, a dump shows its whole run's timeline from this pass meanwhile.
  std::optional<HeapTimeline> timeline;
  if (early) timeline.emplace(*start);
  MappingRecord mappings(*start);
  auto report = build_heap_report(path, RelativeWindow{}, load, symbolizer_, timeline ? &*timeline : nullptr,
                                  early ? nullptr : &table, nullptr, &mappings);
  if (!report) return report.error();
  if (table.full()) return Error{ErrorCode::kUsage, too_many_rows(path)};
  if (report->stopped) {
    const std::lock_guard lock(err_mu_);
    err_ << "memrec: " << report->stopped->message << " (the view covers the frames before it)\n";
  }
  server::ViewDump dump;
  dump.report = std::move(*report);
  mappings.extend_to(dump.end_ns());
  dump.mappings = std::move(mappings);
  if (early) {
    timeline->extend_to(dump.end_ns());
    dump.early_timeline = std::move(timeline);
  } else {
    publish_table(dump, table, err_);
  }
  server::index_site_labels(dump);
  server::set_whole_run(dump);
  return dump;
}

void ViewLoads::report_pass(std::size_t i) {
  server::DumpLoad& load_state = *data_.loads[i];
  const std::string& path = load_state.path();
  const auto started = Clock::now();
  const bool early = serves_early(options_, path);
  std::string why;
  try {
    LoadBoard::Pass bar(board_, "loading " + path);
    LoadOptions load{budget_.threads_each, [&bar](std::size_t done, std::size_t total) { bar.update(done, total); }};
    bool held = false;
    load.load_progress = [&](std::size_t done, std::size_t total, const LoadProgress& read) {
      load_state.progress(read.bytes_read, read.bytes_total);
      bar.update(done, total, &read);
      if (!held && done * 2 >= total) {
        held = true;
        hold_while_asked(hold_dir_, path);
      }
    };
    Result<server::ViewDump> dump = view_dump(path, early, load);
    if (dump) {
      const std::unique_lock lock(*data_.follow_lock);
      data_.dumps[i] = std::move(*dump);
      load_state.ready();
    } else {
      why = dump.error().message;
    }
  } catch (const std::exception& e) {
    why = path + ": internal error: " + e.what();
  }
  publish_warnings();
  const std::lock_guard lock(err_mu_);
  if (!why.empty()) {
    {
      const std::unique_lock data_lock(*data_.follow_lock);
      load_state.fail(why);
    }
    err_ << "memrec: " << why << "\n";
    return;
  }
  {
    const std::lock_guard queue(mu_);
    ++served_;
    if (early) tables_.push_back(Pass{i, true});
  }
  if (options_.files.size() > 1) {
    err_ << "memrec: view: " << path << " is served after " << seconds_since(started) << " s" << std::endl;
  }
  if (early) {
    err_ << "memrec: view: " << path << ": the whole run's figures, timeline, call sites and flamegraphs are "
         << "served; ranges, instants and the allocation list follow once the allocation table is built" << std::endl;
  }
}

// The second pass over a dump already served: the table, checked against the
// report it must agree with (the file could have changed in between).
void ViewLoads::table_pass(std::size_t i) {
  server::ViewDump& dump = data_.dumps[i];  // not replaced again once served
  const std::string& path = dump.report.dump.path;
  const auto start = Clock::now();
  server::TableSlot& slot = *dump.slot;
  std::string why;
  try {
    LoadBoard::Pass bar(board_, "building the allocation table of " + path);
    LoadOptions load{budget_.threads_each, [&](std::size_t done, std::size_t total) {
                       slot.progress(done, total);
                       bar.update(done, total);
                     }};
    // What the report read, not what a recording still running has added since.
    load.file_bytes = dump.report.dump.facts.file_bytes;
    AllocationTableBuilder builder;
    Result<ReplayedRun> run = replay_into(path, load, builder);
    if (!run) {
      why = run.error().message;
    } else if (builder.full()) {
      why = too_many_rows(path);
    } else if (run->events != dump.report.events || run->totals.allocations != dump.report.totals.allocations ||
               run->totals.frees != dump.report.totals.frees) {
      why = path + " changed since its report was read (" + std::to_string(run->events) + " events now, " +
            std::to_string(dump.report.events) + " then): load it again";
    } else {
      publish_table(dump, builder, err_);
    }
  } catch (const std::exception& e) {
    why = std::string("internal error: ") + e.what();
  }
  const std::lock_guard lock(err_mu_);
  if (!why.empty()) {
    err_ << "memrec: view: no allocation table: " << why << "\n";
    slot.fail(why + ".");
    return;
  }
  // A spill directory that failed while the table grew (the page's list was made before).
  std::vector<std::string> listed;
  {
    const std::shared_lock data_lock(*data_.follow_lock);
    listed = data_.warnings;
  }
  for (const std::string& w : spill_warnings()) {
    if (std::find(listed.begin(), listed.end(), w) == listed.end()) err_ << "memrec: " << w << "\n";
  }
  err_ << "memrec: view: " << path << ": the allocation table is built after " << seconds_since(start)
       << " s: ranges, instants, the timeline's finer buckets and the allocation list are ready" << std::endl;
}

}  // namespace memrec::analyzer
