// Workers resolve without holding any lock: each borrows a resolver of its
// own (libdwfl handles are single-threaded) and publishes its results into
// the cache under one exclusive lock per batch.
#include "symbolize/module_state.h"

namespace memrec::analyzer {

ModuleState::ModuleState(const SymbolizeModule& module, std::span<const std::string> debug_dirs)
    : module_{module.path, module.build_id, 0, module.segments}, debug_dirs_(debug_dirs.begin(), debug_dirs.end()) {}

const ModuleSource& ModuleState::source() {
  std::call_once(located_, [&] {
    source_ = locate_module(module_, debug_dirs_);
    if (source_.warning) warn(*source_.warning);
  });
  return source_;
}

std::unique_ptr<ModuleResolver> ModuleState::acquire() {
  const ModuleSource& src = source();
  if (src.kind == SourceKind::kNone) return nullptr;
  {
    std::lock_guard lock(mutex_);
    if (broken_) return nullptr;
    if (!idle_.empty()) {
      std::unique_ptr<ModuleResolver> r = std::move(idle_.back());
      idle_.pop_back();
      return r;
    }
  }
  // Opened outside the lock: loading a large file must not stall the other
  // workers of this module, who may have resolvers to give back.
  auto opened = ModuleResolver::open(src, debug_dirs_);
  if (opened) return std::move(*opened);
  std::lock_guard lock(mutex_);
  if (!broken_) {
    broken_ = true;
    warn(opened.error().message + "; its frames show as module+offset");
  }
  return nullptr;
}

void ModuleState::release(std::unique_ptr<ModuleResolver> resolver) {
  if (resolver == nullptr) return;
  std::lock_guard lock(mutex_);
  idle_.push_back(std::move(resolver));
}

void ModuleState::warn(std::string message) {
  std::lock_guard lock(warnings_mutex_);
  warnings_.push_back(std::move(message));
}

std::vector<std::string> ModuleState::warnings() const {
  std::lock_guard lock(warnings_mutex_);
  return warnings_;
}

void ModuleState::resolve(std::span<const std::uint64_t> offsets) {
  std::vector<std::vector<ResolvedFrame>> found(offsets.size());
  std::unique_ptr<ModuleResolver> resolver = acquire();
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    found[i] = resolver ? resolver->resolve(offsets[i]) : std::vector<ResolvedFrame>(1);
  }
  release(std::move(resolver));
  std::unique_lock lock(cache_mutex_);
  for (std::size_t i = 0; i < offsets.size(); ++i) cache_.try_emplace(offsets[i], std::move(found[i]));
}

void ModuleState::append_symbols(std::span<const std::uint64_t> offsets, const std::string& module_path,
                                 std::vector<Symbol>& out) const {
  static const std::vector<ResolvedFrame> kUnknown(1);
  std::shared_lock lock(cache_mutex_);
  for (const std::uint64_t offset : offsets) {
    const auto it = cache_.find(offset);
    const std::vector<ResolvedFrame>& frames = it != cache_.end() ? it->second : kUnknown;
    Symbol& symbol = out.emplace_back();
    symbol.frames.reserve(frames.size());
    for (const ResolvedFrame& f : frames) symbol.frames.push_back(f.to_source_frame());
    symbol.module = module_path;
    symbol.module_offset = offset;
  }
}

}  // namespace memrec::analyzer
