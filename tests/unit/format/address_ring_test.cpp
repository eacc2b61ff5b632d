// The writer's IndexedAddressRing gives every address the position the
// reader's AddressRing (the definition) gives it, through evictions, hits,
// repeated addresses and the log's compaction.
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "memrec/format/address_ring.h"

using memrec::format::AddressRing;
using memrec::format::IndexedAddressRing;
using memrec::format::kAddressRingSlots;

namespace {

// Runs `ops` random finds (removing what they hit) and pushes on both rings
// and checks that they agree at every step. `pool` addresses are drawn from:
// a small pool repeats addresses (and pushes one twice), a large one misses.
void run_both(std::uint32_t seed, int ops, std::uint64_t pool, int hit_percent) {
  std::mt19937_64 rng(seed);
  AddressRing plain;
  IndexedAddressRing indexed;
  std::vector<std::uint64_t> pushed;
  for (int i = 0; i < ops; ++i) {
    if (static_cast<int>(rng() % 100) < hit_percent) {
      const std::uint64_t a = !pushed.empty() && rng() % 4 != 0 ? pushed[rng() % pushed.size()] : (rng() % pool) * 16;
      const std::optional<std::uint32_t> want = plain.find(a);
      const std::optional<IndexedAddressRing::Hit> got = indexed.find(a);
      REQUIRE(want.has_value() == got.has_value());
      if (want) {
        REQUIRE(*want == got->position);
        plain.remove(*want);
        indexed.remove(*got);
      }
    } else {
      const std::uint64_t a = (rng() % pool) * 16;
      plain.push(a);
      indexed.push(a);
      pushed.push_back(a);
    }
    REQUIRE(plain.count == indexed.count());
  }
}

}  // namespace

TEST_CASE("the indexed ring finds every address at the plain ring's position") {
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    run_both(seed, 4000, 1 << 20, 50);
  }
}

TEST_CASE("the indexed ring agrees when addresses repeat and are pushed twice") {
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    run_both(seed, 4000, 40, 45);
  }
}

TEST_CASE("the indexed ring agrees when most entries leave by hits, so its log wraps onto kept ones") {
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    run_both(seed, 4000, 1 << 12, 70);
  }
}

TEST_CASE("the indexed ring keeps the newest 32 and forgets the oldest") {
  IndexedAddressRing ring;
  for (std::uint64_t a = 1; a <= 100; ++a) ring.push(a * 16);
  CHECK(ring.count() == kAddressRingSlots);
  CHECK_FALSE(ring.find(68 * 16).has_value());
  REQUIRE(ring.find(69 * 16).has_value());
  CHECK(ring.find(69 * 16)->position == kAddressRingSlots - 1);
  CHECK(ring.find(100 * 16)->position == 0);
  ring.remove(*ring.find(100 * 16));
  CHECK(ring.find(99 * 16)->position == 0);
  CHECK(ring.find(69 * 16)->position == kAddressRingSlots - 2);
}

TEST_CASE("the indexed ring keeps an old entry when the log wraps onto it") {
  AddressRing plain;
  IndexedAddressRing indexed;
  for (std::uint64_t a : {0x1000, 0x2000, 0x3000}) {
    plain.push(a);
    indexed.push(a);
  }
  // 200 entries that come and go at once: the log passes the three kept ones
  // three times.
  for (std::uint64_t i = 0; i < 200; ++i) {
    const std::uint64_t a = 0x10000 + i * 16;
    plain.push(a);
    indexed.push(a);
    REQUIRE(indexed.find(a).has_value());
    indexed.remove(*indexed.find(a));
    plain.remove(*plain.find(a));
  }
  REQUIRE(indexed.count() == 3);
  for (std::uint64_t a : {0x1000, 0x2000, 0x3000}) {
    CAPTURE(a);
    REQUIRE(indexed.find(a).has_value());
    CHECK(indexed.find(a)->position == *plain.find(a));
  }
}
