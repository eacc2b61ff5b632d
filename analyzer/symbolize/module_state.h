// What the symbolizer keeps per module file (path + build-id): where its debug
// info is, decided once; idle resolvers for workers to borrow; the frames
// found so far, by address. Shared by all workers: every member is guarded.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "symbolize/module_resolver.h"
#include "symbolize/module_source.h"
#include "symbolize/resolved_frame.h"
#include "symbolize/symbolizer.h"

namespace memrec::analyzer {

class ModuleState {
 public:
  // `module`'s path, build-id and segments identify the file; its bias is not used.
  ModuleState(const SymbolizeModule& module, std::span<const std::string> debug_dirs);

  // Resolves `offsets` (return addresses minus the bias) into the cache.
  void resolve(std::span<const std::uint64_t> offsets);

  // Appends a Symbol for each of `offsets` to `out`, from the cache (an
  // offset never resolved gets one unknown frame), under one lock.
  void append_symbols(std::span<const std::uint64_t> offsets, const std::string& module_path,
                      std::vector<Symbol>& out) const;
  // Calls `miss(offset)` for each of `offsets` not cached yet, under one lock.
  template <typename Miss>
  void for_each_miss(std::span<const std::uint64_t> offsets, const Miss& miss) const {
    std::shared_lock lock(cache_mutex_);
    for (const std::uint64_t offset : offsets) {
      if (!cache_.contains(offset)) miss(offset);
    }
  }

  std::vector<std::string> warnings() const;

 private:
  const ModuleSource& source();
  std::unique_ptr<ModuleResolver> acquire();
  void release(std::unique_ptr<ModuleResolver> resolver);
  void warn(std::string message);

  const SymbolizeModule module_;
  const std::vector<std::string> debug_dirs_;

  std::once_flag located_;
  ModuleSource source_;  // written once under located_

  std::mutex mutex_;  // guards idle_ and broken_; taken before warnings_mutex_
  // Every resolver ever opened comes back here and lives as long as the
  // state: the cache's frames point into them.
  std::vector<std::unique_ptr<ModuleResolver>> idle_;
  bool broken_ = false;  // libdwfl could not load the file: module+offset from now on
  std::vector<std::string> warnings_;
  mutable std::mutex warnings_mutex_;

  mutable std::shared_mutex cache_mutex_;
  std::unordered_map<std::uint64_t, std::vector<ResolvedFrame>> cache_;
};

}  // namespace memrec::analyzer
