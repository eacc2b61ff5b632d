// Folds decoded frames, in file order, into a LoadedDump: metadata records
// applied in sequence, Stack records added to the stack table on a thread of
// its own, heap events appended to their thread's stream. dump_loader.cpp
// folds a whole file; dump_follower.cpp folds what a live dump appended.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "load/dump_loader.h"
#include "load/frame_collector.h"
#include "load/helper_queue.h"
#include "load/loaded_dump.h"

namespace memrec::analyzer {

inline ThreadInfo& thread_entry(LoadedDump& d, std::unordered_map<std::uint64_t, std::size_t>& by_tid,
                                std::uint64_t tid) {
  const auto [it, inserted] = by_tid.try_emplace(tid, d.threads.size());
  if (inserted) d.threads.push_back(ThreadInfo{tid, {}, {}, {}});
  return d.threads[it->second];
}

// Applies one metadata record to the model, in file order.
class MetaApplier {
 public:
  explicit MetaApplier(LoadedDump& d) : d_(d) {}

  void operator()(const reader::ThreadRecord& r) { thread_entry(d_, by_tid_, r.tid); }
  // One entry per tid: the first start and the last exit. (A tid the kernel
  // reuses within one recording shows as one thread; pid_max makes that rare.)
  void operator()(const reader::ThreadStartRecord& r) {
    ThreadInfo& t = thread_entry(d_, by_tid_, r.tid);
    if (!t.start_ns) t.start_ns = r.time_ns;
    t.name = r.name;
  }
  void operator()(const reader::ThreadNameRecord& r) { thread_entry(d_, by_tid_, r.tid).name = r.name; }
  void operator()(const reader::ThreadExitRecord& r) { thread_entry(d_, by_tid_, r.tid).exit_ns = r.time_ns; }
  void operator()(const reader::ModuleLoadRecord& r) {
    d_.modules.push_back(ModuleInfo{r.id, r.path, r.bias, r.build_id, r.segments, r.gen, std::nullopt});
  }
  void operator()(const reader::ModuleUnloadRecord& r) {
    // The latest module with that id is the one unloaded.
    for (auto it = d_.modules.rbegin(); it != d_.modules.rend(); ++it) {
      if (it->id == r.id) {
        it->unload_gen = r.gen;
        break;
      }
    }
  }
  void operator()(const reader::RecordingRecord& r) { d_.recording.push_back(r); }
  void operator()(const reader::CountersRecord& r) { d_.facts.note_counters(r); }
  void operator()(const reader::EndRecord&) { d_.facts.clean_end = true; }
  void operator()(const reader::ExecRecord& r) { d_.facts.note_exec(r); }
  void operator()(const reader::MarkerRecord& r) {
    // After the markers before it in time; after equal ones, keeping the file's order.
    const auto at = std::upper_bound(d_.markers.begin(), d_.markers.end(), r.time_ns,
                                     [](std::uint64_t t, const reader::MarkerRecord& m) { return t < m.time_ns; });
    d_.markers.insert(at, r);
  }
  template <typename Other>
  void operator()(const Other&) {}  // event records never land in `meta`

 private:
  LoadedDump& d_;
  std::unordered_map<std::uint64_t, std::size_t> by_tid_;
};

// Adds Stack records to the StackTable on a thread of its own, in file
// order: inserting deep, varied stacks is the largest part of the folding
// thread's work otherwise (cc1plus: 0.18 of 0.55 s), and that thread is the
// load's critical path. At most kMaxBatches frames' records wait. The thread
// keeps the load's priority: with many stacks the folding thread waits for
// it, and at the helpers' nice +10 it shared the other core with the decoders
// while the folding thread's stood idle (cc1plus's report: 0.57 -> 0.51 s).
class StackBuilder {
 public:
  // The modules loaded as of a batch's frame, for LoadOptions::on_addresses.
  using Modules = std::shared_ptr<const std::vector<ModuleInfo>>;

  StackBuilder(StackTable& table, const LoadOptions& options) : table_(table), options_(options) {}

  void add(std::vector<reader::StackRecord> batch, Modules modules) {
    queue_.push(Batch{std::move(batch), std::move(modules)});
  }

  // Waits for every record added so far; the error of a failed insertion, if any.
  std::optional<std::string> finish() {
    queue_.finish();
    return error_;
  }

 private:
  static constexpr std::size_t kMaxBatches = 8;

  struct Batch {
    std::vector<reader::StackRecord> stacks;
    Modules modules;  // null without on_addresses
  };

  void build(Batch& batch) {
    if (error_) return;  // keep draining, so add() never blocks for good
    try {
      // The table numbers distinct addresses as it meets them: a stack's new
      // ones are those past the count before it (cc1plus: 8,000 of 10.4 M).
      const bool share = options_.on_addresses && batch.modules;
      first_used_.clear();
      for (std::size_t i = 0; i < batch.stacks.size(); ++i) {
        // Each record's frames are an allocation of their own, written by a
        // decoding thread: fetched while the one before is added.
        if (i + 1 < batch.stacks.size()) {
          const std::vector<std::uint64_t>& next = batch.stacks[i + 1].ips;
          for (std::size_t k = 0; k < next.size(); k += 8) __builtin_prefetch(&next[k]);
        }
        const reader::StackRecord& r = batch.stacks[i];
        const std::size_t known = table_.address_count();
        table_.add(r.id, r.module_gen, r.truncated(), r.ips);
        for (std::size_t a = known; share && a < table_.address_count(); ++a) {
          first_used_.push_back(StackAddress{table_.ip_of_address(static_cast<std::uint32_t>(a)), r.module_gen});
        }
      }
      if (share && !first_used_.empty()) {
        options_.on_addresses(*batch.modules, first_used_);
      }
    } catch (const std::exception& e) {  // std::bad_alloc on a dump too big for this machine
      error_ = std::string("building the stack table failed: ") + e.what();
    }
  }

  StackTable& table_;
  const LoadOptions& options_;
  std::optional<std::string> error_;      // written by the builder thread only, read after finish()
  std::vector<StackAddress> first_used_;  // the builder thread's
  HelperQueue<Batch> queue_{[this](Batch& batch) { build(batch); }, kMaxBatches,
                            /*lower_priority=*/false};  // last: its thread uses the rest
};

// Adds one decoded frame, in file order, to the model.
class FrameFolder {
 public:
  FrameFolder(LoadedDump& d, StackBuilder& stacks, const LoadOptions& options)
      : d_(d), apply_(d), stacks_(&stacks), options_(options) {}
  // A followed dump folds each step's frames with a builder of that step's.
  void use(StackBuilder& stacks) { stacks_ = &stacks; }

  void add_meta(FrameData& f) {
    d_.counts += f.counts;
    d_.rss_max_bytes = std::max(d_.rss_max_bytes, f.rss_max_bytes);
    d_.rss.insert(d_.rss.end(), f.rss.begin(), f.rss.end());
    if (f.last_time_ns) d_.last_time_ns = std::max(d_.last_time_ns.value_or(0), *f.last_time_ns);
    std::vector<reader::StackRecord> stacks;
    for (reader::Record& r : f.meta) {
      if (auto* stack = std::get_if<reader::StackRecord>(&r)) {
        stacks.push_back(std::move(*stack));
      } else {
        std::visit(apply_, r);
      }
    }
    if (stacks.empty()) return;
    stacks_->add(std::move(stacks), options_.on_addresses ? modules() : nullptr);
  }

  void add(FrameData& f) {
    add_meta(f);
    for (auto& [tid, events] : f.events) {
      const auto [it, inserted] = stream_of_tid_.try_emplace(tid, d_.streams.size());
      if (inserted) d_.streams.emplace_back();
      auto& stream = d_.streams[it->second];
      if (stream.empty()) {
        stream.swap(events);
      } else {
        stream.insert(stream.end(), events.begin(), events.end());
      }
    }
  }

 private:
  LoadedDump& d_;
  MetaApplier apply_;
  // The modules as of now, copied again only when one was loaded or unloaded.
  StackBuilder::Modules modules() {
    std::size_t unloaded = 0;
    for (const ModuleInfo& m : d_.modules) unloaded += m.unload_gen.has_value() ? 1 : 0;
    if (modules_ == nullptr || modules_->size() != d_.modules.size() || unloaded != unloaded_) {
      modules_ = std::make_shared<const std::vector<ModuleInfo>>(d_.modules);
      unloaded_ = unloaded;
    }
    return modules_;
  }

  StackBuilder* stacks_;
  const LoadOptions& options_;
  StackBuilder::Modules modules_;
  std::size_t unloaded_ = 0;
  std::unordered_map<std::uint64_t, std::size_t> stream_of_tid_;
};

}  // namespace memrec::analyzer
