// The Symbolizer: finds each request's module state, answers from the cache,
// and resolves the misses in chunks across worker threads. A module with
// many misses is split into up to one chunk per worker (each borrows its own
// resolver); small ones stay whole, as a resolver's first lookups in a module
// (loading its symbol table, line tables, function index) cost the most.
#include "symbolize/symbolizer.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_set>

#include <fmt/format.h>

#include "common/parallel_for.h"
#include "symbolize/module_state.h"

namespace memrec::analyzer {
namespace {

// Below this many misses a module is not split: a second resolver would
// spend longer loading than it saves.
constexpr std::size_t kMinChunkAddresses = 4096;

std::string module_key(const SymbolizeModule& m) {
  std::string key = m.path;
  key.push_back('\0');
  key.append(m.build_id.begin(), m.build_id.end());
  return key;
}

struct Chunk {
  ModuleState* state;
  std::span<const std::uint64_t> offsets;
};

}  // namespace

std::string module_offset_name(const Symbol& symbol) {
  const std::string name = std::filesystem::path(symbol.module).filename().string();
  return fmt::format("{}+{:#x}", name.empty() ? symbol.module : name, symbol.module_offset);
}

struct Symbolizer::Impl {
  SymbolizerOptions options;
  unsigned threads = 1;

  mutable std::mutex mutex;  // guards states and order
  std::map<std::string, std::unique_ptr<ModuleState>> states;
  std::vector<ModuleState*> order;                     // first use first: warnings come out in this order
  std::unordered_set<const ModuleState*> used_states;  // those in order

  // `used`: a request that needs the answers, not a prefetch. Warnings come
  // out in order of first use, so prefetching never reorders them.
  ModuleState* state_for(const SymbolizeModule& module, bool used) {
    std::lock_guard lock(mutex);
    auto [it, inserted] = states.try_emplace(module_key(module));
    if (inserted) it->second = std::make_unique<ModuleState>(module, options.debug_dirs);
    if (used && used_states.insert(it->second.get()).second) order.push_back(it->second.get());
    return it->second.get();
  }

  void resolve_misses(std::map<ModuleState*, std::vector<std::uint64_t>>& misses) {
    std::vector<Chunk> chunks;
    for (auto& [state, offsets] : misses) {
      std::sort(offsets.begin(), offsets.end());
      offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
      // Sorted offsets keep each chunk within a part of the module, so its
      // resolver loads only the line tables of that part.
      const std::size_t parts = std::clamp<std::size_t>(offsets.size() / kMinChunkAddresses, 1, threads);
      const std::span<const std::uint64_t> all(offsets);
      for (std::size_t p = 0; p < parts; ++p) {
        const std::size_t begin = all.size() * p / parts;
        const std::size_t end = all.size() * (p + 1) / parts;
        chunks.push_back(Chunk{state, all.subspan(begin, end - begin)});
      }
    }
    std::stable_sort(chunks.begin(), chunks.end(),
                     [](const Chunk& a, const Chunk& b) { return a.offsets.size() > b.offsets.size(); });
    parallel_for(chunks.size(), threads, [&](std::size_t i) { chunks[i].state->resolve(chunks[i].offsets); });
  }
};

Symbolizer::Symbolizer(SymbolizerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->threads = options.threads != 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  impl_->options = std::move(options);
}

Symbolizer::~Symbolizer() = default;

std::vector<Symbol> Symbolizer::symbolize(const SymbolizeModule& module, std::span<const std::uint64_t> ips) {
  const Request request{&module, {ips.begin(), ips.end()}};
  return std::move(symbolize_all(std::span(&request, 1)).front());
}

std::vector<std::vector<Symbol>> Symbolizer::symbolize_all(std::span<const Request> requests) {
  std::vector<ModuleState*> states(requests.size());
  std::vector<std::vector<std::uint64_t>> offsets(requests.size());
  std::map<ModuleState*, std::vector<std::uint64_t>> misses;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const SymbolizeModule& module = *requests[i].module;
    states[i] = impl_->state_for(module, true);
    offsets[i].reserve(requests[i].ips.size());
    // Wrapping: an ip below the bias (a bad request) still gets an answer.
    for (const std::uint64_t ip : requests[i].ips) offsets[i].push_back(ip - module.bias);
    states[i]->for_each_miss(offsets[i], [&](std::uint64_t offset) { misses[states[i]].push_back(offset); });
  }
  if (!misses.empty()) impl_->resolve_misses(misses);

  std::vector<std::vector<Symbol>> results(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    results[i].reserve(offsets[i].size());
    states[i]->append_symbols(offsets[i], requests[i].module->path, results[i]);
  }
  return results;
}

void Symbolizer::prefetch(const SymbolizeModule& module, std::span<const std::uint64_t> ips) {
  ModuleState* state = impl_->state_for(module, false);
  std::vector<std::uint64_t> misses;
  std::vector<std::uint64_t> offsets;
  offsets.reserve(ips.size());
  for (const std::uint64_t ip : ips) offsets.push_back(ip - module.bias);
  state->for_each_miss(offsets, [&](std::uint64_t offset) { misses.push_back(offset); });
  if (misses.empty()) return;
  std::sort(misses.begin(), misses.end());
  misses.erase(std::unique(misses.begin(), misses.end()), misses.end());
  state->resolve(misses);
}

std::vector<std::string> Symbolizer::warnings() const {
  std::vector<ModuleState*> order;
  {
    std::lock_guard lock(impl_->mutex);
    order = impl_->order;
  }
  std::vector<std::string> out;
  for (const ModuleState* state : order) {
    for (std::string& w : state->warnings()) out.push_back(std::move(w));
  }
  return out;
}

}  // namespace memrec::analyzer
