// The preload's own unwinder (unwind.cpp, cfi.cpp) without the preload: its
// frames against libunwind's, the reuse of the last walk, truncation, and the
// stack hash it carries against hash_stack().
#include "unwind.h"

#include <doctest/doctest.h>

#include <new>
#include <vector>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "os.h"
#include "stack_table.h"

using namespace memrec::preload;

namespace {

struct Walk {
  std::vector<std::uint64_t> ours;
  std::vector<std::uint64_t> libunwind;
  Backtrace bt{};
};

UnwindCache& cache() {
  static UnwindCache* c = new (os::map(sizeof(UnwindCache))) UnwindCache();
  return *c;
}

// unwind_init() is not called here, so no frame counts as the preload's own:
// ours start in `probe` (as a hook's start in the hook), libunwind's in
// unw_backtrace. From the caller of `probe` outwards both must agree.
[[gnu::noinline]] void probe(Walk& w, std::size_t max_depth) {
  std::uint64_t ips[kMaxTraceFrames];
  w.bt = capture_backtrace(cache(), stack_here(), ips, max_depth);
  if (w.bt.in_trace) trace_ips(cache(), w.bt.depth, ips);
  w.ours.assign(ips + w.bt.first, ips + w.bt.first + w.bt.depth);
  void* raw[kMaxTraceFrames];
  const int n = unw_backtrace(raw, static_cast<int>(max_depth));
  for (int i = 0; i < n; ++i) w.libunwind.push_back(reinterpret_cast<std::uintptr_t>(raw[i]));
  asm volatile("" ::: "memory");
}

[[gnu::noinline]] void via_a(Walk& w) {
  probe(w, 128);
  asm volatile("" ::: "memory");
}
[[gnu::noinline]] void via_b(Walk& w) {
  probe(w, 128);
  asm volatile("" ::: "memory");
}
[[gnu::noinline]] void deep(Walk& w, int levels, std::size_t max_depth) {
  if (levels == 0) {
    probe(w, max_depth);
  } else {
    deep(w, levels - 1, max_depth);
  }
  asm volatile("" ::: "memory");
}

// Below `framed` frames, whose CFA is rbp-based (alloca makes GCC keep a
// frame pointer), a frame that saves rbp and calls `probe` with `rbp_value` in
// it: the walk must take the framed frames' rbp from the saved slot, not from
// the register.
[[gnu::noinline]] void with_rbp(Walk& w, std::uint64_t rbp_value) {
  asm volatile("mov %0, %%rbp" : : "r"(rbp_value) : "rbp", "memory");
  probe(w, 200);
  asm volatile("" ::: "memory");
}
[[gnu::noinline]] void framed(Walk& w, int levels, std::size_t bytes, std::uint64_t rbp_value) {
  auto* buf = static_cast<volatile char*>(__builtin_alloca(bytes));
  buf[0] = 1;
  if (levels == 0) {
    with_rbp(w, rbp_value);
  } else {
    framed(w, levels - 1, bytes, rbp_value);
  }
  asm volatile("" ::: "memory");
}

// Two framed frames whose sizes add up to the same whatever the split: the
// frames inside them are at the same places, with the same return addresses,
// but the inner framed frame (and so its return address slot) is not.
[[gnu::noinline]] void framed_pair(Walk& w, std::size_t outer_bytes, std::size_t inner_bytes) {
  auto* buf = static_cast<volatile char*>(__builtin_alloca(outer_bytes));
  buf[0] = 1;
  framed(w, 0, inner_bytes, 7);
  asm volatile("" ::: "memory");
}

// A random stack: at each level a frame with an rbp-based CFA and an alloca
// of some size, one that saves rbp and puts some value in it, or a plain one.
struct Plan {
  int levels;
  int kinds[8];
  std::size_t bytes[8];
  std::uint64_t rbp[8];
};
void level(Walk& w, const Plan& p, int i);
[[gnu::noinline]] void level_framed(Walk& w, const Plan& p, int i) {
  auto* buf = static_cast<volatile char*>(__builtin_alloca(p.bytes[i]));
  buf[0] = 1;
  level(w, p, i + 1);
  asm volatile("" ::: "memory");
}
[[gnu::noinline]] void level_saves_rbp(Walk& w, const Plan& p, int i) {
  asm volatile("mov %0, %%rbp" : : "r"(p.rbp[i]) : "rbp", "memory");
  level(w, p, i + 1);
  asm volatile("" ::: "memory");
}
[[gnu::noinline]] void level_plain(Walk& w, const Plan& p, int i) {
  level(w, p, i + 1);
  asm volatile("" ::: "memory");
}
void level(Walk& w, const Plan& p, int i) {
  if (i == p.levels) {
    probe(w, 200);
  } else if (p.kinds[i] == 0) {
    level_framed(w, p, i);
  } else if (p.kinds[i] == 1) {
    level_saves_rbp(w, p, i);
  } else {
    level_plain(w, p, i);
  }
}

// The outer `count` frames of a stack.
std::vector<std::uint64_t> outer(const std::vector<std::uint64_t>& ips, std::size_t count) {
  return std::vector<std::uint64_t>(ips.end() - static_cast<std::ptrdiff_t>(count), ips.end());
}

}  // namespace

#if defined(__x86_64__)
TEST_SUITE("preload/unwind") {
  TEST_CASE("our walk finds the frames libunwind finds, and their hash") {
    Walk w;
    via_a(w);
    REQUIRE(w.bt.depth >= 4);
    REQUIRE(w.libunwind.size() >= 4);
    CHECK_FALSE(w.bt.truncated);
    // libunwind's first frame is inside unw_backtrace, ours inside probe.
    const std::size_t common = w.libunwind.size() - 1;
    REQUIRE(w.ours.size() >= common);
    CHECK(outer(w.ours, common) == outer(w.libunwind, common));
    CHECK(w.bt.hash == hash_stack(w.ours, false));
  }

  TEST_CASE("a walk from the same place again gives the same stack") {
    Walk w[2];
    volatile int count = 2;  // a loop the compiler cannot unroll: one call site
    for (int i = 0; i < count; ++i) via_a(w[i]);
    CHECK(w[0].ours == w[1].ours);
    CHECK(w[0].bt.hash == w[1].bt.hash);
  }

  TEST_CASE("the walk after one from another path sees the path it was called from") {
    Walk w[3];
    void (*const paths[3])(Walk&) = {via_a, via_b, via_a};
    volatile int count = 3;  // a loop the compiler cannot unroll: one call site
    for (int i = 0; i < count; ++i) paths[i](w[i]);
    CHECK(w[0].ours == w[2].ours);
    CHECK(w[0].ours != w[1].ours);
    CHECK(w[0].bt.hash != w[1].bt.hash);
    for (const Walk& each : w) {
      CHECK(each.bt.hash == hash_stack(each.ours, false));
      const std::size_t common = each.libunwind.size() - 1;
      CHECK(outer(each.ours, common) == outer(each.libunwind, common));
    }
  }

  TEST_CASE("walks at different depths each agree with libunwind") {
    for (const int levels : {30, 3, 17, 17, 0, 30}) {
      Walk w;
      deep(w, levels, 200);
      const std::size_t common = w.libunwind.size() - 1;
      REQUIRE(w.ours.size() >= common);
      CHECK(outer(w.ours, common) == outer(w.libunwind, common));
      CHECK(w.bt.hash == hash_stack(w.ours, false));
    }
  }

  TEST_CASE("frames with an rbp-based CFA agree with libunwind whatever rbp holds below them") {
    struct Case {
      int levels;
      std::size_t bytes;
      std::uint64_t rbp;
    };
    for (const Case& each : {Case{3, 16, 1}, Case{3, 16, 2}, Case{5, 64, 3}, Case{3, 32, 3}, Case{3, 16, 4},
                             Case{0, 16, 5}, Case{5, 64, 5}, Case{5, 64, 6}}) {
      Walk w;
      framed(w, each.levels, each.bytes, each.rbp);
      const std::size_t common = w.libunwind.size() - 1;
      REQUIRE(w.ours.size() >= common);
      CHECK(outer(w.ours, common) == outer(w.libunwind, common));
      CHECK(w.bt.hash == hash_stack(w.ours, false));
    }
  }

  TEST_CASE("frames at the same places inside rbp-based frames that moved agree with libunwind") {
    Walk w[4];
    const std::size_t splits[4][2] = {{16, 96}, {96, 16}, {48, 64}, {16, 96}};
    volatile int count = 4;  // a loop the compiler cannot unroll: one call site
    for (int i = 0; i < count; ++i) framed_pair(w[i], splits[i][0], splits[i][1]);
    for (const Walk& each : w) {
      const std::size_t common = each.libunwind.size() - 1;
      REQUIRE(each.ours.size() >= common);
      CHECK(outer(each.ours, common) == outer(each.libunwind, common));
      CHECK(each.bt.hash == hash_stack(each.ours, false));
    }
    CHECK(w[0].ours == w[3].ours);
  }

  TEST_CASE("walk after walk through random frames with and without rbp, each agrees with libunwind") {
    std::uint64_t state = 42;
    const auto next = [&state](std::uint64_t n) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      return (state >> 33) % n;
    };
    constexpr std::size_t kBytes[] = {16, 32, 48, 64, 96};
    for (int round = 0; round < 3000; ++round) {
      Plan p{};
      p.levels = static_cast<int>(next(9));
      for (int i = 0; i < p.levels; ++i) {
        p.kinds[i] = static_cast<int>(next(3));
        p.bytes[i] = kBytes[next(5)];
        p.rbp[i] = next(3);
      }
      Walk w;
      level(w, p, 0);
      const std::size_t common = w.libunwind.size() - 1;
      REQUIRE(w.ours.size() >= common);
      REQUIRE(outer(w.ours, common) == outer(w.libunwind, common));
      REQUIRE(w.bt.hash == hash_stack(w.ours, false));
    }
  }

  TEST_CASE("around the walk's frame limit, a walk that reuses the last one gives what a walk from scratch gives") {
    for (const int levels : {990, 1005, 1012, 1013, 1014, 1015, 1016, 1020, 1100, 1013, 1030, 1011, 1200, 1014}) {
      CAPTURE(levels);
      Walk w[2];
      volatile int count = 2;  // a loop the compiler cannot unroll: one call site
      for (int i = 0; i < count; ++i) {
        if (i == 1) cache().complete = false;  // nothing to reuse
        deep(w[i], levels, 10);
      }
      const Walk& reused = w[0];
      const Walk& scratch = w[1];
      CHECK(reused.ours == scratch.ours);
      CHECK(reused.bt.depth == scratch.bt.depth);
      CHECK(reused.bt.truncated == scratch.bt.truncated);
      CHECK(reused.bt.hash == scratch.bt.hash);
    }
  }

  TEST_CASE("a stack deeper than max_depth is cut, marked truncated, and told apart by its outer frames") {
    Walk w[3];
    volatile int count = 3;  // a loop the compiler cannot unroll: one call site
    for (int i = 0; i < count; ++i) deep(w[i], i == 1 ? 41 : 40, 10);
    for (const Walk& each : w) {
      CHECK(each.bt.truncated);
      CHECK(each.bt.depth == 10);
    }
    // The innermost ten frames are the same at depths 40 and 41, the stacks not.
    CHECK(w[0].ours == w[1].ours);
    CHECK(w[0].bt.hash != w[1].bt.hash);
    CHECK(w[0].ours == w[2].ours);
    CHECK(w[0].bt.hash == w[2].bt.hash);
  }
}
#endif
