// Opens the debug information of a dump's modules while the dump still loads.
// The thread that builds the stack table hands the addresses each frame's
// stacks use first over (LoadOptions::on_addresses); the first ones met in each module are
// resolved on a worker of its own, which opens the module's file and debug
// files into the symbolizer. On churn, inflating libc's compressed DWARF took
// 45 ms after a 250 ms load; now it overlaps the load. The other addresses
// are left to the report's own symbolization, which spreads them over every
// core: resolving all of cc1plus's here made its load slower than the
// symbolization it saved.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "load/dump_loader.h"
#include "load/helper_queue.h"
#include "load/loaded_dump.h"
#include "symbolize/symbolizer.h"

namespace memrec::analyzer {

class SymbolPrefetch {
 public:
  explicit SymbolPrefetch(Symbolizer& symbolizer);
  ~SymbolPrefetch();
  SymbolPrefetch(const SymbolPrefetch&) = delete;
  SymbolPrefetch& operator=(const SymbolPrefetch&) = delete;

  // From one thread at a time (the stack table's builder): queues a few of
  // `addresses`, each new to the load, of each module of `modules` not
  // queued before. Never waits for the worker, never throws. Checking every
  // address of every stack instead took 6 % of cc1plus's report when it ran
  // on the loading thread, and 4 % of the stack table's builder after.
  void add(std::span<const ModuleInfo> modules, std::span<const StackAddress> addresses);

  // Drops what is still queued and waits for the module being opened.
  void finish();

 private:
  struct Batch {
    SymbolizeModule module;
    std::vector<std::uint64_t> ips;
  };

  bool opened(std::uint64_t ip) const;
  void queue(std::span<const ModuleInfo> modules, std::span<const StackAddress> addresses);
  void resolve(Batch& batch);

  Symbolizer& symbolizer_;
  // add()'s thread only: the modules queued so far, and how many addresses were in none.
  std::vector<ModuleInfo> opened_;
  std::size_t unmapped_ = 0;
  HelperQueue<Batch> worker_{[this](Batch& batch) { resolve(batch); }};  // last: its thread uses the rest
};

}  // namespace memrec::analyzer
