// A dump's state only moves forward: live, then ended or cut. A cut dump is
// finished (every held event handed on) before it is marked, so its figures
// are those `memrec report` gives of the file as it was cut.
#include "server/live_dumps.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

namespace memrec::analyzer::server {

LiveDumps::LiveDumps(std::vector<std::string> sources, FollowOptions options) : options_(std::move(options)) {
  for (std::string& s : sources) {
    std::error_code ec;
    if (std::filesystem::is_directory(s, ec)) {
      directories_.push_back(std::move(s));
    } else {
      add(s);
    }
  }
}

void LiveDumps::add(const std::string& path) {
  for (const auto& d : dumps_) {
    if (d->path == path) return;
  }
  dumps_.push_back(std::unique_ptr<Followed>(
      new Followed{path, FollowedReport(path, options_, /*with_table=*/true), DumpState::kLive, {}}));
}

bool LiveDumps::step(Followed& d) {
  if (d.state != DumpState::kLive) return false;
  const bool was_started = d.report.started();
  const auto step = d.report.step();
  if (!step) return false;  // no header yet: the recorder has not written it
  bool changed = !was_started || step->frames > 0;
  const DumpFollower& follower = d.report.follower();
  if (step->error) d.error = step->error->message;
  if (follower.finished()) {
    d.state = DumpState::kEnded;
    return true;
  }
  const reader::FileHeader& header = follower.dump().header;
  // Checked after the step: a process that wrote its last frames and
  // exited in between has had them read.
  if (step->error || !dump_process_alive(header.pid, header.start_mono_ns)) {
    if (!step->error) {
      // What it wrote between the step and its exit.
      const auto last = d.report.step();
      if (last && last->frames > 0) changed = true;
      if (d.report.follower().finished()) {
        d.state = DumpState::kEnded;
        return true;
      }
    }
    d.report.finish();
    d.state = DumpState::kCut;
    return true;
  }
  return changed;
}

std::vector<std::size_t> LiveDumps::poll() {
  for (const std::string& dir : directories_) {
    for (const std::string& path : dumps_in_directory(dir)) add(path);
  }
  std::vector<std::size_t> changed;
  for (std::size_t i = 0; i < dumps_.size(); ++i) {
    if (step(*dumps_[i])) changed.push_back(i);
  }
  return changed;
}

ViewDump LiveDumps::snapshot(std::size_t i, Symbolizer& symbolizer) {
  Followed& d = *dumps_[i];
  ViewDump view;
  view.report = d.report.report(symbolizer);
  view.early_timeline = d.report.timeline();
  view.mappings = d.report.mappings();
  view.site_label = d.report.sites().labels();
  set_whole_run(view);
  return view;
}

void LiveDumps::publish(std::size_t i, ViewDump& view) {
  Followed& d = *dumps_[i];
  if (d.state == DumpState::kLive) view.followed_edge_ns = d.report.follower().released_before();
  const std::shared_ptr<AllocationTable> table = d.report.publish_table();
  if (table == nullptr) {
    view.slot->fail(d.report.table_full()
                        ? d.path + " holds more than " + std::to_string(AllocationTableBuilder::kMaxRows) +
                              " allocations, more than an allocation table can hold"
                        : d.path + ": no allocation table was built");
    return;
  }
  const CallSites& sites = view.report.sites;
  table->set_sites(sites.site_of_stack, static_cast<std::uint32_t>(sites.sites.size()));
  view.slot->share(table);
}

}  // namespace memrec::analyzer::server
