// Backtrace capture (see unwind.h). The walk in walk_stack() is the hot part;
// rule lookups that miss, the stack bounds and libunwind are cold.
// libunwind's unw_backtrace, even with its per-thread fast trace cache, costs
// about 80 instructions a frame here (callgrind, libunwind 1.6.2); a step with
// a cached rule costs about 40, a frame unchanged since the last walk 5 (10
// with a frame pointer), and the frames below the hook's none, as the walk
// starts there (docs/design/unwinder.md).
#include "unwind.h"

#include <link.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cerrno>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "fd_guard.h"
#include "os.h"
#include "stack_table.h"

namespace memrec::preload {
namespace {

struct Range {
  std::uintptr_t lo = 0;
  std::uintptr_t hi = 0;
  bool contains(std::uint64_t ip) const { return ip >= lo && ip < hi; }
};

Range g_self;
Range g_unwinder;

struct Find {
  std::uintptr_t addr;
  Range* out;
};

int find_module(dl_phdr_info* info, std::size_t, void* data) {
  auto* f = static_cast<Find*>(data);
  Range r{~std::uintptr_t{0}, 0};
  bool hit = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
    const std::uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    const std::uintptr_t hi = lo + ph.p_memsz;
    if (lo < r.lo) r.lo = lo;
    if (hi > r.hi) r.hi = hi;
    if (f->addr >= lo && f->addr < hi) hit = true;
  }
  if (!hit) return 0;
  *f->out = r;
  return 1;
}

void locate(const void* addr, Range& out) {
  Find f{reinterpret_cast<std::uintptr_t>(addr), &out};
  dl_iterate_phdr(find_module, &f);
}

// The stack that holds `sp`, as far as a walk may read it: from sp's page up
// to the first page above it that cannot be read (the top of the main
// thread's [stack], or the guard page of the thread stack glibc mapped above
// this one). Found on the thread's first stack; when the stack has grown
// below what we saw (the pages in between readable: the same stack, not
// counted); or when the thread runs on another stack (a signal stack, a
// coroutine): at most kMaxStackSwitches times, then such stacks always go
// to libunwind. No descriptor: reading /proc/self/maps here, on a program
// thread, held the lowest free number for a moment, which the program's own
// dup2() or open() in another thread could meet (docs/design/descriptors.md).
constexpr std::uint32_t kMaxStackSwitches = 16;
// How far above sp a stack may reach: past that the walk stops (and
// libunwind takes the stack).
constexpr std::size_t kMaxStackPages = 4096;
constexpr std::uintptr_t kPageBytes = 4096;

[[gnu::cold, gnu::noinline]] bool find_stack_bounds(UnwindCache& c, std::uintptr_t sp) {
  const int saved_errno = errno;
  const std::uintptr_t sp_page = sp & ~(kPageBytes - 1);
  if (c.stack_hi != 0 && sp < c.stack_lo && (c.stack_lo - sp_page) / kPageBytes <= kMaxStackPages) {
    // Deeper on the stack we know, if every page up to it can be read.
    const std::size_t between = (c.stack_lo - sp_page) / kPageBytes;
    if (os::readable_pages(sp_page, between, kPageBytes) == static_cast<long>(between)) {
      c.stack_lo = sp_page;
      errno = saved_errno;
      return true;
    }
  }
  if (c.stack_switches >= kMaxStackSwitches) {
    errno = saved_errno;
    return false;
  }
  const std::uintptr_t old_hi = c.stack_hi;
  const long pages = os::readable_pages(sp_page, kMaxStackPages, kPageBytes);
  const bool found = pages > 0;
  c.stack_lo = found ? sp_page : 0;
  c.stack_hi = found ? sp_page + static_cast<std::uintptr_t>(pages) * kPageBytes : 0;
  if (!found || c.stack_hi != old_hi) {
    ++c.stack_switches;
    c.trace_n = 0;  // the last walk may be on another stack, which may be gone
  }
  errno = saved_errno;
  return found;
}

// Fills the slot of `pc` from the module's CFI. A module unloaded since the
// slots were filled may have left rules for addresses now used by another.
[[gnu::cold, gnu::noinline]] const UnwindRule& fill_rule(UnwindCache& c, UnwindCache::Slot& slot, std::uintptr_t pc) {
  const UnwindRule rule = find_unwind_rule(pc);
  const std::uint64_t subs = modules_unloaded();
  if (subs != c.subs) {
    for (UnwindCache::Slot& s : c.slots) s = UnwindCache::Slot{};
    c.subs = subs;
  }
  slot.pc = pc;
  slot.rule = rule;
  return slot.rule;
}

// HOT PATH.
inline const UnwindRule& rule_for(UnwindCache& c, std::uintptr_t pc) {
  UnwindCache::Slot& s = c.slots[(pc * 0x9e3779b97f4a7c15ull) >> (64 - UnwindCache::kBits)];
  if (s.pc == pc) [[likely]]
    return s.rule;
  return fill_rule(c, s, pc);
}

[[gnu::cold, gnu::noinline]] std::size_t with_libunwind(UnwindCache& c, std::uint64_t* ips, std::size_t limit) {
  c.trace_n = 0;  // nothing to reuse next time
  const int got = unw_backtrace(reinterpret_cast<void**>(ips), static_cast<int>(limit));
  return got > 0 ? static_cast<std::size_t>(got) : 0;
}

inline std::uintptr_t load(std::uintptr_t at) { return *reinterpret_cast<const std::uintptr_t*>(at); }

// HOT PATH. The last index k <= j with old[k].sp >= sp, or -1; old[j].sp < sp
// and sp grows towards index 0. A few steps, then a binary search: a walk
// much shallower than the last one (after a deep recursion returned) skips
// many frames.
inline std::ptrdiff_t outer_index(const TraceFrame* old, std::ptrdiff_t j, std::uintptr_t sp) {
  for (int step = 0; step < 4; ++step) {
    if (--j < 0 || old[j].sp >= sp) return j;
  }
  if (old[0].sp < sp) return -1;
  std::ptrdiff_t lo = 0;  // old[lo].sp >= sp
  std::ptrdiff_t hi = j;  // old[hi].sp < sp
  while (hi - lo > 1) {
    const std::ptrdiff_t mid = lo + (hi - lo) / 2;
    if (old[mid].sp >= sp) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// A slot that never holds 1: the check of the outermost frame, and of the
// frame where a full walk stops, reads it and fails.
const std::uintptr_t g_no_slot = 0;

inline TraceCheck failing_check() { return {reinterpret_cast<std::uintptr_t>(&g_no_slot), 1}; }

// HOT PATH. Checks frames j, j - 1, ... of the last walk, whose frame j this
// walk entered with the same pc and sp (and rbp, if frame j's is needed), and
// returns the first one this walk must step afresh: 0 if none (frame 0 is the
// outermost: the stack is unchanged), `stop` if all before it are unchanged
// (the walk is full there), else the first whose caller may have changed;
// `ra_only` if its return address slot was all that failed.
//
// A frame's caller is unchanged if its return address slot still holds the
// caller's pc and, for a frame whose CFA is rbp-based, rbp is what it was:
// the value in the slot of the nearest frame inside it that saved rbp, or
// frame j's. So a frame that saves an rbp an outer frame needs has a second
// check, of that slot, and no frame needs more than its checks: each is a
// load and a compare.
inline std::ptrdiff_t unchanged_until(UnwindCache& c, std::ptrdiff_t j, std::ptrdiff_t stop, bool& ra_only) {
  const TraceFrame* const old = c.trace;
  TraceCheck* const check = c.check;
  std::uint32_t stop_at = 0;
  TraceCheck saved{};
  if (stop != 0) [[unlikely]] {
    stop_at = old[stop].check_end - 1;
    saved = check[stop_at];
    check[stop_at] = failing_check();
  }
  const TraceCheck* p = check + old[j].check_end - 1;
  while (load(p->at) == p->want) --p;
  const auto e = static_cast<std::uint32_t>(p - check);
  if (stop != 0) [[unlikely]]
    check[stop_at] = saved;
  const std::ptrdiff_t i = c.check_frame[e];
  ra_only = i != 0 && e == old[i - 1].check_end;
  return i;
}

// HOT PATH. Walks the stack from `from` and leaves the result in c.trace;
// returns its frame count (0: a frame could not be followed; the caller asks
// libunwind).
//
// Reusing the last walk: a frame's caller is a function of the frame's
// registers (pc, sp, and bp if its CFA is rbp-based) and of the one or two
// stack slots its rule reads. When a frame is entered with the same pc and sp
// as a frame of the last walk, and the slots that frame read still hold what
// was read from them, its caller is the last walk's next frame, and so on
// outwards. So the walk steps only the frames that changed (with a rule
// lookup each) and checks the others with a load or two (unchanged_until);
// the unchanged outer frames stay where they are in c.trace (outermost first),
// with their hashes and checks.
#if defined(__x86_64__)
std::size_t walk_stack(UnwindCache& c, const StackStart& from, std::size_t limit) {
  std::uintptr_t pc = from.pc;
  std::uintptr_t sp = from.sp;
  std::uintptr_t bp = from.bp;
  if ((sp < c.stack_lo || sp >= c.stack_hi) && !find_stack_bounds(c, sp)) return 0;
  // Every read is in [lo, lo + span]: between the first frame (live while we
  // walk) and the top of the stack, so a wrong rule gives a wrong stack,
  // never a fault. Slots the last walk read were checked against its own lo,
  // on the same stack (a new stack clears the last walk), whose mapping only
  // grows.
  const std::uintptr_t lo = sp;
  const std::uintptr_t span = c.stack_hi - 8 - lo;
  TraceFrame* const old = c.trace;
  TraceFrame* const fresh = c.fresh;
  // Only a complete walk is reused: its outermost frame is the stack's.
  std::ptrdiff_t j = c.complete ? static_cast<std::ptrdiff_t>(c.trace_n) - 1 : -1;
  std::ptrdiff_t kept = -1;  // old[0..kept] are this walk's outermost frames
  std::size_t n = 0;         // frames in `fresh`
  bool complete = false;
  std::uintptr_t key = pc;  // the first pc is exact; return addresses are looked up at the call
  for (;;) {
    if (j >= 0 && old[j].sp < sp) j = outer_index(old, j, sp);
    // A full walk takes no more frames, not even the last walk's outer ones:
    // it ends as a walk without a last one would.
    if (j >= 0 && old[j].sp == sp && old[j].pc == pc && n < limit) {
      // Frames j..i of the last walk are this walk's n, n+1, ...; the walk
      // holds at most `limit` frames.
      const std::ptrdiff_t room = static_cast<std::ptrdiff_t>(n) + j + 1 - static_cast<std::ptrdiff_t>(limit);
      const std::ptrdiff_t stop = room > 0 ? room : 0;
      std::ptrdiff_t i = j;  // with another rbp where it is needed, frame j itself is stepped afresh
      bool ra_only = false;
      if (!old[j].bp_needed || old[j].bp == bp) {
        i = unchanged_until(c, j, stop, ra_only);
        if (i == 0) {
          kept = j;
          complete = true;
          break;
        }
      }
      // Frame i is where the stacks part (or the walk is full): step it
      // afresh, after the frames before it, each with the rbp it was entered
      // with in this walk (the last walk's may differ where it was not
      // needed, and may be needed now that they have other outer frames).
      for (std::ptrdiff_t k = j; k > i; --k) {
        TraceFrame& f = fresh[n++] = old[k];
        f.bp = bp;
        if (f.bp_at != 0) bp = load(f.bp_at);
      }
      if (ra_only && i < j && i != stop) {
        // Only its return address changed. Its rule is the one the last walk
        // used (for pc - 1 both times: frames j..i+1 come before it here, and
        // a walk's first pc, taken in a hook, is never a return address) with
        // the same registers (its rbp, if its CFA needs it, passed its check),
        // so its slots and its CFA (the last walk's next sp) are the last
        // walk's: no lookup.
        const TraceFrame& o = old[i];
        if (o.ra_at - lo > span || (o.bp_at != 0 && o.bp_at - lo > span)) [[unlikely]]
          return 0;
        TraceFrame* f = &fresh[n++];
        *f = o;
        f->bp = bp;
        if (o.bp_at != 0) bp = load(o.bp_at);
        pc = load(o.ra_at);
        sp = old[i - 1].sp;
        j = i - 1;
        if (pc == 0) {
          complete = true;
          break;
        }
        key = pc - 1;
        continue;
      }
      pc = old[i].pc;
      sp = old[i].sp;
      key = n == 0 ? pc : pc - 1;
      j = i - 1;
    }
    if (n == limit) break;
    TraceFrame* f = &fresh[n++];
    f->pc = pc;
    f->sp = sp;
    f->bp = bp;
    const UnwindRule r = rule_for(c, key);
    if (r.kind != RuleKind::kRsp && r.kind != RuleKind::kRbp) [[unlikely]] {
      if (r.kind != RuleKind::kEnd) return 0;
      f->ra_at = f->bp_at = 0;
      f->uses_bp = false;
      complete = true;
      break;
    }
    f->uses_bp = r.kind == RuleKind::kRbp;
    const std::uintptr_t cfa = (r.kind == RuleKind::kRsp ? sp : bp) + static_cast<std::intptr_t>(r.cfa_off);
    const std::uintptr_t ra_at = cfa + static_cast<std::intptr_t>(r.ra_off8) * 8;
    if (ra_at - lo > span) [[unlikely]]
      return 0;
    f->ra_at = ra_at;
    f->bp_at = 0;
    if (r.rbp_off != 0) {
      const std::uintptr_t bp_at = cfa + static_cast<std::intptr_t>(r.rbp_off);
      if (bp_at - lo > span) [[unlikely]]
        return 0;
      f->bp_at = bp_at;
      bp = load(bp_at);
    }
    pc = load(ra_at);
    sp = cfa;
    if (pc == 0) {
      complete = true;
      break;
    }
    key = pc - 1;
  }
  // The new frames go inside the kept ones, with their hashes and checks. A
  // frame's rbp is needed if it uses it, or passes it on unchanged to an
  // outer frame that needs it; that depends only on the frame and the ones
  // outside it, so the kept frames' marks and checks stay right, and a kept
  // frame's rbp, where needed, passed its check.
  const std::size_t base = static_cast<std::size_t>(kept + 1);
  std::uint64_t h = kStackHashSeed;
  bool needed = false;
  std::uint32_t e = 0;
  if (base != 0) {
    h = old[base - 1].hash;
    needed = old[base - 1].bp_needed;
    e = old[base - 1].check_end;
  }
  // Each frame is made in registers and stored once, its outer frame's pc and
  // rbp carried over: reading back a frame just stored in pieces missed the
  // store buffer's forwarding, a fifth of the walk's time (perf).
  std::uintptr_t outer_pc = base != 0 ? old[base - 1].pc : 0;
  std::uintptr_t outer_bp = base != 0 ? old[base - 1].bp : 0;
  for (std::size_t t = 0; t < n; ++t) {
    const std::size_t k = base + t;
    TraceFrame d = fresh[n - 1 - t];
    d.hash = h = hash_fold(h, d.pc);
    const auto frame = static_cast<std::uint32_t>(k);
    if (k == 0) {
      c.check[e] = failing_check();
      c.check_frame[e++] = frame;
    } else {
      c.check[e] = {d.ra_at, outer_pc};
      c.check_frame[e++] = frame;
      if (d.bp_at != 0 && needed) {
        c.check[e] = {d.bp_at, outer_bp};
        c.check_frame[e++] = frame;
      }
    }
    d.check_end = e;
    needed = d.uses_bp || (d.bp_at == 0 && needed);
    d.bp_needed = needed;
    old[k] = d;
    outer_pc = d.pc;
    outer_bp = d.bp;
  }
  c.trace_n = static_cast<std::uint32_t>(base + n);
  c.complete = complete;
  return base + n;
}
#else
std::size_t walk_stack(UnwindCache&, const StackStart&, std::size_t) { return 0; }
#endif

}  // namespace

bool in_unwinder(std::uintptr_t pc) { return g_unwinder.contains(pc); }

void unwind_init() {
  locate(reinterpret_cast<const void*>(&capture_backtrace), g_self);
  locate(reinterpret_cast<const void*>(&unw_backtrace), g_unwinder);
  // Per-thread caches: libunwind's global cache takes a lock on every lookup.
  // Its first call also opens its validation pipe, here at init while the
  // process has one thread, so the moment the pipe holds the lowest free
  // numbers (before fd_guard moves it above the floor) meets no program thread.
  allow_unwinder_pipe(true);
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  allow_unwinder_pipe(false);
}

// The frames of another allocator's operator new between our hook and our
// operator new that forwarded to it (libstdc++'s is one frame).
constexpr std::size_t kMaxForwardedFrames = 4;

Backtrace capture_backtrace(UnwindCache& c, const StackStart& from, std::uint64_t* ips, std::size_t max_depth) {
  static_assert(sizeof(void*) == sizeof(std::uint64_t));
  const std::size_t limit = max_depth + 1 + kUnwindOwnFrames;
  // Our frames from `from` outwards (the hook's, and any of ours that called
  // it) are cut here; libunwind's walk below starts in its own frame and cuts
  // its frames and ours, so both give the same program frames.
  const std::size_t n = walk_stack(c, from, kMaxWalkFrames);
  if (n != 0) [[likely]] {
    const TraceFrame* t = c.trace;
    std::size_t skip = 0;
    while (skip < n && g_self.contains(t[n - 1 - skip].pc)) ++skip;
    c.skip = static_cast<std::uint32_t>(skip);
    const std::size_t depth = n - skip;
    if (c.complete && depth != 0) {
      // t[depth - 1].hash folds every program frame, from the outermost in.
      if (depth <= max_depth) return {0, depth, false, true, hash_finish(t[depth - 1].hash, depth, false)};
      return {0, max_depth, true, true, hash_finish(t[depth - 1].hash, depth, true)};
    }
    const bool truncated = depth > max_depth;
    const std::size_t kept = truncated ? max_depth : depth;
    trace_ips(c, kept, ips);
    return {0, kept, truncated, false, hash_stack(std::span<const std::uint64_t>(ips, kept), truncated)};
  }
  std::size_t got = with_libunwind(c, ips, limit);
  if (got == 0) return {0, 0, false, false, 0};
  std::size_t skip = 0;
  while (skip < got && g_unwinder.contains(ips[skip])) ++skip;
  while (skip < got && g_self.contains(ips[skip])) ++skip;
  if (from.forwarded) {
    // Our hook, the next allocator's operator new, then ours: cut up to the
    // program's caller of ours (a few frames at most; else keep them all).
    std::size_t next = skip;
    while (next < got && next - skip < kMaxForwardedFrames && !g_self.contains(ips[next])) ++next;
    if (next < got && g_self.contains(ips[next])) {
      while (next < got && g_self.contains(ips[next])) ++next;
      skip = next;
    }
  }
  got -= skip;
  const bool truncated = got > max_depth;
  const std::size_t kept = truncated ? max_depth : got;
  return {skip, kept, truncated, false, hash_stack(std::span<const std::uint64_t>(ips + skip, kept), truncated)};
}

void trace_ips(const UnwindCache& c, std::size_t depth, std::uint64_t* ips) {
  const std::size_t innermost = c.trace_n - 1 - c.skip;
  for (std::size_t i = 0; i < depth; ++i) ips[i] = c.trace[innermost - i].pc;
}

}  // namespace memrec::preload
