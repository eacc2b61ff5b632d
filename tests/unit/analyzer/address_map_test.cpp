// AddressMap against std::unordered_map under random inserts and erases.
#include <doctest/doctest.h>

#include <random>
#include <unordered_map>

#include "model/address_map.h"

using namespace memrec::analyzer;

TEST_SUITE("analyzer/address_map") {
  TEST_CASE("behaves like a std::unordered_map under random inserts, replaces and erases") {
    AddressMap map;
    std::unordered_map<std::uint64_t, std::uint64_t> want;
    std::mt19937_64 rng(99);
    for (int step = 0; step < 300000; ++step) {
      // A small key space makes collisions, replacements and long chains common;
      // ~0 is the map's empty marker and must still work as a key.
      const std::uint64_t r = rng() % 5000;
      const std::uint64_t addr = r == 0 ? ~0ull : 0x7f0000000000 + 16 * r;
      CAPTURE(step);
      if (rng() % 3 == 0) {
        const auto got = map.erase(addr);
        const auto it = want.find(addr);
        REQUIRE(got.has_value() == (it != want.end()));
        if (got) {
          CHECK(got->size == it->second);
          want.erase(it);
        }
      } else {
        const std::uint64_t size = rng();
        const auto old = map.insert(addr, LiveBlock{size, StackId{1}, 0});
        const auto it = want.find(addr);
        REQUIRE(old.has_value() == (it != want.end()));
        if (old) CHECK(old->size == it->second);
        want[addr] = size;
      }
      REQUIRE(map.size() == want.size());
    }
    std::size_t seen = 0;
    map.for_each([&](std::uint64_t addr, const LiveBlock& b) {
      ++seen;
      REQUIRE(want.count(addr) == 1);
      CHECK(want.at(addr) == b.size);
      CHECK(map.find(addr) == &b);
    });
    CHECK(seen == want.size());
  }

  TEST_CASE("grows past its first capacity and keeps every block") {
    AddressMap map;
    for (std::uint64_t i = 0; i < 100000; ++i) CHECK_FALSE(map.insert(i * 64, LiveBlock{i, {}, 0}).has_value());
    CHECK(map.size() == 100000);
    for (std::uint64_t i = 0; i < 100000; ++i) {
      const LiveBlock* b = map.find(i * 64);
      REQUIRE(b != nullptr);
      CHECK(b->size == i);
    }
    CHECK(map.find(1) == nullptr);
  }
}
