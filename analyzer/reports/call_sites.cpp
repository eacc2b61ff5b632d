// Symbolization runs once per distinct (module, return address) of the
// stacks that matter, in one batch so the symbolizer can spread modules over
// its workers. A frame is interned by what the report shows — function, file,
// line, module, inlined — and by its address only when the function is unknown.
// Stacks share their callers (load/stack_table.h): interning a stack node's
// frames and hashing the frame list up to it are done once per node (and
// module generation), not once per stack through it.
#include "reports/call_sites.h"

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <bit>
#include <map>
#include <memory>
#include <thread>
#include <tuple>
#include <unordered_set>

#include "common/parallel_for.h"
#include "model/module_map.h"
#include "reports/runtime_frames.h"
#include "reports/site_label.h"
#include "symbolize/symbolizer.h"

namespace memrec::analyzer {

// What a SiteFrames view walks: the stack tree, and the frame ids of each
// (generation stamp, address number) as runs in one pool.
struct SiteFrames::Chains {
  StackTable stacks;
  std::size_t addresses = 0;             // address numbers per stamp
  std::vector<std::uint32_t> run_begin;  // by (stamp - 1) * addresses + address, and one past the last
  std::vector<std::uint32_t> ids;

  std::pair<const std::uint32_t*, const std::uint32_t*> run(std::uint32_t node, std::uint32_t stamp) const {
    const std::size_t k = (stamp - 1) * addresses + stacks.address_of(node);
    return {ids.data() + run_begin[k], ids.data() + run_begin[k + 1]};
  }
};

SiteFrames::SiteFrames(std::vector<std::uint32_t> ids) : size_(static_cast<std::uint32_t>(ids.size())) {
  if (ids.empty()) return;
  auto chains = std::make_shared<Chains>();
  chains->ids = std::move(ids);
  chains_ = std::move(chains);
}

SiteFrames::const_iterator SiteFrames::begin() const {
  const_iterator it;
  if (size_ == 0) return it;
  if (stamp_ == 0) {
    it.at_ = chains_->ids.data();
    it.run_end_ = it.at_ + chains_->ids.size();
    return it;
  }
  it.chains_ = chains_.get();
  it.node_ = leaf_;
  it.stamp_ = stamp_;
  std::tie(it.at_, it.run_end_) = chains_->run(leaf_, stamp_);
  it.settle();
  return it;
}

void SiteFrames::const_iterator::settle() {
  while (at_ == run_end_) {
    if (chains_ != nullptr) node_ = chains_->stacks.caller(node_);
    if (chains_ == nullptr || node_ == StackTable::kRoot) {
      at_ = nullptr;
      node_ = 0;
      return;
    }
    std::tie(at_, run_end_) = chains_->run(node_, stamp_);
  }
}

SiteFrames::const_iterator& SiteFrames::const_iterator::operator++() {
  ++at_;
  settle();
  return *this;
}

std::uint32_t SiteFrames::operator[](std::size_t i) const {
  auto it = begin();
  std::advance(it, i);
  return *it;
}

SymbolizeModule symbolize_module(const ModuleInfo& m) {
  SymbolizeModule out;
  out.path = m.path;
  out.build_id.reserve(m.build_id.size());
  for (const std::byte b : m.build_id) out.build_id.push_back(static_cast<std::uint8_t>(b));
  out.bias = m.bias;
  out.segments = m.segments;
  return out;
}

namespace {

bool matters(const StackColumns& c, std::size_t s) {
  return c.allocations[s] != 0 || c.leaked_count[s] != 0 || c.peak_bytes[s] != 0;
}

// The symbols of every address the stacks that matter use, by module index,
// found by (stack node, generation).
class AddressSymbols {
 public:
  static constexpr std::uint32_t kNone = ~0u;

  AddressSymbols(const LoadedDump& dump, const StackColumns& columns, Symbolizer& symbolizer) : stacks_(dump.stacks) {
    const ModuleMap map(dump.modules);
    std::map<std::size_t, std::vector<std::uint64_t>> ips_by_module;
    // ip -> symbol index, per module: resolved below.
    std::unordered_map<std::size_t, std::unordered_map<std::uint64_t, std::uint32_t>> by_module;
    struct Placed {
      std::uint32_t stamp;
      std::uint32_t address;
      std::size_t module;
    };
    std::vector<Placed> placed;
    // A node seen with a generation had its callers seen with it too: the
    // walk up a stack stops there (a stamp per node; generations are few).
    std::vector<std::uint32_t> seen(dump.stacks.node_count(), 0);
    dump.stacks.for_each([&](StackId id, const StackTable::Stack& stack) {
      if (id.value >= columns.size() || !matters(columns, id.value)) return;
      const std::uint32_t stamp = stamp_of(stack.module_gen);
      std::vector<std::uint32_t>& of_address = of_address_[stamp - 1];
      for (StackTable::Node n = stack.leaf; n != StackTable::kRoot && seen[n] != stamp; n = stacks_.caller(n)) {
        seen[n] = stamp;
        const std::uint32_t a = stacks_.address_of(n);
        if (of_address[a] != kUnseen) continue;
        of_address[a] = kNone;
        const std::uint64_t ip = stacks_.ip(n);
        const ModuleInfo* m = map.find(ip, stack.module_gen);
        if (m == nullptr) continue;
        const std::size_t mi = static_cast<std::size_t>(m - dump.modules.data());
        if (by_module[mi].emplace(ip, kNone).second) ips_by_module[mi].push_back(ip);
        placed.push_back({stamp, a, mi});
      }
    });
    seen = {};
    std::vector<SymbolizeModule> modules;
    modules.reserve(ips_by_module.size());
    for (const auto& [mi, ips] : ips_by_module) modules.push_back(symbolize_module(dump.modules[mi]));
    std::vector<Symbolizer::Request> requests;
    std::size_t k = 0;
    for (auto& [mi, ips] : ips_by_module) requests.push_back({&modules[k++], ips});
    std::vector<std::vector<Symbol>> results = symbolizer.symbolize_all(requests);
    k = 0;
    for (const auto& [mi, ips] : ips_by_module) {
      std::vector<Symbol>& symbols = results[k++];
      for (std::size_t i = 0; i < ips.size() && i < symbols.size(); ++i) {
        by_module[mi][ips[i]] = static_cast<std::uint32_t>(symbols_.size());
        symbols_.push_back(std::move(symbols[i]));
      }
    }
    for (const Placed& p : placed) {
      of_address_[p.stamp - 1][p.address] = by_module[p.module][stacks_.ip_of_address(p.address)];
    }
  }

  // 1 + the index of generation `gen` among those seen, added if new.
  std::uint32_t stamp_of(std::uint64_t gen) {
    const auto it = std::find(gens_.begin(), gens_.end(), gen);
    if (it != gens_.end()) return static_cast<std::uint32_t>(it - gens_.begin() + 1);
    gens_.push_back(gen);
    of_address_.emplace_back(stacks_.address_count(), kUnseen);
    return static_cast<std::uint32_t>(gens_.size());
  }

  // The index of the symbol of node `n`'s address in a stack of the
  // generation of `stamp` (kNone outside every module), for symbol().
  std::uint32_t index(StackTable::Node n, std::uint32_t stamp) const {
    const std::uint32_t i = of_address_[stamp - 1][stacks_.address_of(n)];
    return i == kUnseen ? kNone : i;
  }
  std::uint32_t index_of_address(std::uint32_t a, std::uint32_t stamp) const {
    const std::uint32_t i = of_address_[stamp - 1][a];
    return i == kUnseen ? kNone : i;
  }
  std::uint32_t stamp_count() const { return static_cast<std::uint32_t>(gens_.size()); }
  const Symbol& symbol(std::uint32_t i) const { return symbols_[i]; }
  // Frees a symbol's strings once its frames are interned.
  void release(std::uint32_t i) { symbols_[i] = Symbol{}; }
  std::size_t size() const { return symbols_.size(); }

 private:
  static constexpr std::uint32_t kUnseen = kNone - 1;

  const StackTable& stacks_;
  std::vector<std::uint64_t> gens_;                     // by stamp - 1
  std::vector<std::vector<std::uint32_t>> of_address_;  // by stamp - 1, then address number: a symbol index
  std::vector<Symbol> symbols_;
};

class Interner {
 public:
  // `sites`: at most how many sites site() makes (one per stack that matters).
  Interner(CallSites& out, AddressSymbols& symbols, const StackTable& stacks, std::size_t sites)
      : out_(out),
        symbols_(symbols),
        stacks_(stacks),
        of_symbol_(symbols.size()),
        site_of_key_(std::bit_ceil(std::max<std::size_t>(sites + sites / 3 + 1, 1024))),
        memo_key_(stacks.node_count(), 0),
        memo_stamp_(stacks.node_count(), 0) {}

  // The stack a site's frames are listed from: its innermost node and generation.
  struct Listing {
    StackTable::Node leaf = StackTable::kRoot;
    std::uint32_t stamp = 0;
  };
  // A stack's site is found by a hash of its frame ids, outermost first.
  struct Keyed {
    std::uint64_t key = 0;
    Listing listing;
  };

  // The key of `stack` (nullptr: no frames), and a start on fetching its
  // slot, which site() then reads: sites are found a few stacks after their
  // keys are made, and the slots, scattered over the table, are no longer
  // waited for one by one (cc1plus: half of site()'s own time). Each stack
  // node remembers the key up to it for its generation, so a stack costs the
  // frames no earlier stack shared with it. Frames are interned innermost
  // first, as the stacks list them, so frame ids do not depend on the memo.
  Keyed key_of(const StackTable::Stack* stack) {
    std::uint64_t key = kNoFrames;
    const Listing listing{stack == nullptr ? StackTable::kRoot : stack->leaf,
                          stack == nullptr ? 0 : symbols_.stamp_of(stack->module_gen)};
    if (stack != nullptr) {
      const std::uint32_t stamp = listing.stamp;
      path_.clear();
      StackTable::Node n = stack->leaf;
      for (; n != StackTable::kRoot && memo_stamp_[n] != stamp; n = stacks_.caller(n)) path_.push_back(n);
      if (n != StackTable::kRoot) key = memo_key_[n];
      ids_.clear();
      bounds_.clear();
      for (const StackTable::Node p : path_) {
        append_frames(p, stamp, ids_);
        bounds_.push_back(ids_.size());
      }
      for (std::size_t k = path_.size(); k-- > 0;) {
        const std::size_t begin = k == 0 ? 0 : bounds_[k - 1];
        for (std::size_t j = bounds_[k]; j-- > begin;) key = extend(key, ids_[j]);
        memo_key_[path_[k]] = key;
        memo_stamp_[path_[k]] = stamp;
      }
    }
    __builtin_prefetch(&site_of_key_[key & (site_of_key_.size() - 1)]);
    return Keyed{key, listing};
  }

  // The site of a stack keyed by key_of(), made if new; its frames are listed
  // by list_frames(). Equal frames give equal keys; a different list under
  // the same key (a 64-bit collision) moves on to the next key.
  CallSite& site(const Keyed& keyed) {
    const Listing& listing = keyed.listing;
    for (std::uint64_t key = keyed.key;; ++key) {
      KeySlot& slot = key_slot(key);
      if (slot.site == kNoSite) {
        slot = KeySlot{key, static_cast<std::uint32_t>(out_.sites.size())};
        out_.sites.emplace_back();
        listings_.push_back(listing);
        return out_.sites.back();
      }
      if (same_frames(listings_[slot.site], listing)) return out_.sites[slot.site];
    }
  }

  // Gives every site its frames: a view of the stack it was made from, over
  // a copy of the stack tree and each address's frame ids, so no site stores
  // its ids (cc1plus: 9.5 M). Frees what only site() needed first.
  void list_frames(unsigned threads) {
    memo_key_ = {};
    memo_stamp_ = {};
    auto chains = std::make_shared<SiteFrames::Chains>();
    chains->stacks = stacks_.tree();
    chains->addresses = stacks_.address_count();
    const std::uint32_t stamps = symbols_.stamp_count();
    chains->run_begin.reserve(stamps * chains->addresses + 1);
    for (std::uint32_t stamp = 1; stamp <= stamps; ++stamp) {
      for (std::uint32_t a = 0; a < chains->addresses; ++a) {
        chains->run_begin.push_back(static_cast<std::uint32_t>(chains->ids.size()));
        const std::uint32_t i = symbols_.index_of_address(a, stamp);
        if (i != AddressSymbols::kNone) {
          chains->ids.insert(chains->ids.end(), of_symbol_[i].begin(), of_symbol_[i].end());
        } else if (const auto it = unknown_.find(stacks_.ip_of_address(a)); it != unknown_.end()) {
          chains->ids.push_back(it->second);
        }
      }
    }
    chains->run_begin.push_back(static_cast<std::uint32_t>(chains->ids.size()));
    // Each view's length: a walk per site, read-only, so spread over the cores.
    constexpr std::size_t kSitesPerTask = 1024;
    const std::size_t tasks = (out_.sites.size() + kSitesPerTask - 1) / kSitesPerTask;
    parallel_for(tasks, threads, [&](std::size_t t) {
      const std::size_t end = std::min(out_.sites.size(), (t + 1) * kSitesPerTask);
      for (std::size_t i = t * kSitesPerTask; i < end; ++i) {
        const Listing& l = listings_[i];
        std::uint32_t size = 0;
        for (StackTable::Node n = l.leaf; n != StackTable::kRoot; n = stacks_.caller(n)) {
          const auto [first, last] = chains->run(n, l.stamp);
          size += static_cast<std::uint32_t>(last - first);
        }
        out_.sites[i].frames = SiteFrames(chains, l.leaf, l.stamp, size);
      }
    });
    listings_ = {};
  }

 private:
  // Appends the frames of `l`, innermost first; every node on it was interned.
  void list(const Listing& l, std::vector<std::uint32_t>& into) const {
    for (StackTable::Node n = l.leaf; n != StackTable::kRoot; n = stacks_.caller(n)) {
      const std::uint32_t i = symbols_.index(n, l.stamp);
      if (i == AddressSymbols::kNone) {
        into.push_back(unknown_.at(stacks_.ip(n)));
      } else {
        into.insert(into.end(), of_symbol_[i].begin(), of_symbol_[i].end());
      }
    }
  }
  bool same_frames(const Listing& a, const Listing& b) {
    listed_.clear();
    other_.clear();
    list(a, listed_);
    list(b, other_);
    return listed_ == other_;
  }

  // Appends the frame ids of `ip` (its inline frames, innermost first). A
  // symbol's ids are made once and reused by every stack through it.
  void append_frames(StackTable::Node n, std::uint32_t stamp, std::vector<std::uint32_t>& into) {
    const std::uint32_t i = symbols_.index(n, stamp);
    if (i == AddressSymbols::kNone) {
      const std::uint64_t ip = stacks_.ip(n);
      const auto [it, inserted] = unknown_.try_emplace(ip, 0);
      if (inserted) it->second = frame(SiteFrame{{}, {}, 0, {}, ip, false});
      into.push_back(it->second);
      return;
    }
    std::vector<std::uint32_t>& ids = of_symbol_[i];
    if (ids.empty()) {
      const Symbol& sym = symbols_.symbol(i);
      for (const SourceFrame& f : sym.frames) {
        ids.push_back(frame(SiteFrame{f.function, f.file, f.line, sym.module, sym.module_offset, f.inlined}));
      }
      symbols_.release(i);
    }
    into.insert(into.end(), ids.begin(), ids.end());
  }

  // Frames are equal by what the report shows, and by address only when the
  // function is unknown. The set holds indices into out_.frames, so a
  // frame's strings are kept once.
  struct FrameHash {
    const std::vector<SiteFrame>* frames;
    std::size_t operator()(std::uint32_t i) const {
      const SiteFrame& f = (*frames)[i];
      std::size_t h = std::hash<std::string>{}(f.function);
      h = h * 31 + std::hash<std::string>{}(f.file);
      h = h * 31 + std::hash<std::string>{}(f.module);
      h = h * 31 + f.line * 2 + (f.inlined ? 1 : 0);
      return f.function.empty() ? h * 31 + f.module_offset : h;
    }
  };
  struct FrameEqual {
    const std::vector<SiteFrame>* frames;
    bool operator()(std::uint32_t a, std::uint32_t b) const {
      const SiteFrame& x = (*frames)[a];
      const SiteFrame& y = (*frames)[b];
      return x.function == y.function && x.file == y.file && x.line == y.line && x.module == y.module &&
             x.inlined == y.inlined && (!x.function.empty() || x.module_offset == y.module_offset);
    }
  };

  std::uint32_t frame(SiteFrame f) {
    out_.frames.push_back(std::move(f));
    const auto [it, inserted] = frames_.insert(static_cast<std::uint32_t>(out_.frames.size() - 1));
    if (!inserted) out_.frames.pop_back();
    return *it;
  }

  CallSites& out_;
  AddressSymbols& symbols_;
  const StackTable& stacks_;
  std::vector<std::vector<std::uint32_t>> of_symbol_;         // by symbol index: its frame ids
  std::unordered_map<std::uint64_t, std::uint32_t> unknown_;  // ip outside every module: its frame id
  std::unordered_set<std::uint32_t, FrameHash, FrameEqual> frames_{64, FrameHash{&out_.frames},
                                                                   FrameEqual{&out_.frames}};
  static constexpr std::uint64_t kNoFrames = 0x9e3779b97f4a7c15ull;  // the key of an empty frame list

  // The key of a frame list with `frame` inside the list keyed `key`.
  static std::uint64_t extend(std::uint64_t key, std::uint32_t frame) {
    std::uint64_t h = key ^ ((frame + 1ull) * 0xff51afd7ed558ccdull);
    h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;  // murmur3's finalizer: order matters, bits spread
    h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
  }

  // A site's key: its index in out_.sites. Open addressing, linear probing
  // by the key's low bits (keys are hashes already), at most 3/4 full with
  // as many sites as there can be: std::unordered_map's division and node per
  // key were three quarters of site()'s own time (cc1plus: 170,000 stacks).
  static constexpr std::uint32_t kNoSite = ~0u;
  struct KeySlot {
    std::uint64_t key = 0;
    std::uint32_t site = kNoSite;
  };
  // The slot of `key`: the one holding it, or the empty one where it goes.
  KeySlot& key_slot(std::uint64_t key) {
    const std::size_t mask = site_of_key_.size() - 1;
    for (std::size_t i = key & mask;; i = (i + 1) & mask) {
      if (site_of_key_[i].site == kNoSite || site_of_key_[i].key == key) return site_of_key_[i];
    }
  }
  std::vector<KeySlot> site_of_key_;
  std::vector<std::uint64_t> memo_key_;    // by stack node: its key, for the generation in memo_stamp_
  std::vector<std::uint32_t> memo_stamp_;  // by stack node: 0, or the stamp of that generation
  std::vector<StackTable::Node> path_;     // scratch: the stack nodes to do, innermost first
  std::vector<std::uint32_t> ids_;         // scratch: their frame ids, innermost first
  std::vector<std::size_t> bounds_;        // scratch: where each node's ids end in ids_
  std::vector<std::uint32_t> listed_;      // scratch: two frame lists that share a key
  std::vector<std::uint32_t> other_;
  std::vector<Listing> listings_;  // by site: where its frames are listed from
};

}  // namespace

void add_stack_figures(CallSite& site, const StackColumns& c, std::size_t s) {
  site.allocations += c.allocations[s];
  site.allocated_bytes += c.allocated_bytes[s];
  site.temporary += c.temporary[s];
  site.leaked_bytes += c.leaked_bytes[s];
  site.leaked_count += c.leaked_count[s];
  site.peak_bytes += c.peak_bytes[s];
  ++site.stack_ids;
}

namespace {

void classify(CallSites& out) {
  std::vector<const SiteFrame*> innermost;
  for (CallSite& site : out.sites) {
    innermost.clear();
    for (std::size_t i = 0; i < site.frames.size() && i < kRuntimeFramesLooked; ++i) {
      innermost.push_back(&out.frames[site.frames[i]]);
    }
    if (const auto name = runtime_function(innermost)) {
      site.runtime = true;
      site.runtime_function = std::string(*name);
    }
  }
}

}  // namespace

CallSites build_call_sites(const LoadedDump& dump, const StackColumns& columns, Symbolizer& symbolizer) {
  CallSites out;
  AddressSymbols symbols(dump, columns, symbolizer);
  std::size_t mattering = 0;
  for (std::size_t s = 0; s < columns.size(); ++s) mattering += matters(columns, s) ? 1 : 0;
  Interner interner(out, symbols, dump.stacks, mattering);
  out.sites.reserve(mattering);  // at most one site each; growing by doubling would hold two copies
  // Stacks are keyed kAhead before their sites are found (Interner::key_of).
  constexpr std::size_t kAhead = 8;
  struct Pending {
    std::size_t id;
    const StackTable::Stack* stack;
    Interner::Keyed keyed;
  };
  std::array<Pending, kAhead> pending;
  std::size_t keyed = 0;
  std::size_t placed = 0;
  const auto place = [&](const Pending& p) {
    CallSite& site = interner.site(p.keyed);
    if (p.stack != nullptr) {
      out.site_of_stack[static_cast<std::uint32_t>(p.id)] = static_cast<std::uint32_t>(&site - out.sites.data());
      site.truncated = site.truncated || p.stack->truncated;
    }
    add_stack_figures(site, columns, p.id);
  };
  for (std::size_t s = 0; s < columns.size(); ++s) {
    if (!matters(columns, s)) continue;
    if (keyed - placed == kAhead) place(pending[placed++ % kAhead]);
    // Stack 0 (unwinding failed) or an id never defined: a site without frames.
    const StackTable::Stack* stack = dump.stacks.find(StackId{static_cast<std::uint32_t>(s)});
    pending[keyed++ % kAhead] = Pending{s, stack, interner.key_of(stack)};
  }
  while (placed < keyed) place(pending[placed++ % kAhead]);
  interner.list_frames(worker_threads());
  classify(out);
  label_sites(out);
  return out;
}

std::string frame_label(const SiteFrame& frame) {
  if (!frame.function.empty()) return frame.function;
  if (frame.module.empty()) return fmt::format("{:#x}", frame.module_offset);
  const std::size_t slash = frame.module.rfind('/');
  return fmt::format("{}+{:#x}", slash == std::string::npos ? frame.module : frame.module.substr(slash + 1),
                     frame.module_offset);
}

}  // namespace memrec::analyzer
