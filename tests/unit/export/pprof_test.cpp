// The pprof export read back with a minimal protobuf decoder: one location per
// return address, its inline chain as lines, four values per sample.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "export/export_writers.h"
#include "support/decompress.h"

using namespace memrec::analyzer;
using memrec::test::gunzip;

namespace {

// Fields of one message: number -> raw payloads (varints as their value in `varints`).
struct Fields {
  std::multimap<std::uint32_t, std::string> bytes;
  std::multimap<std::uint32_t, std::uint64_t> varints;
};

std::uint64_t read_varint(const std::string& s, std::size_t& i) {
  std::uint64_t v = 0;
  for (int shift = 0; i < s.size(); shift += 7) {
    const auto b = static_cast<unsigned char>(s[i++]);
    v |= std::uint64_t{b & 0x7fu} << shift;
    if ((b & 0x80) == 0) break;
  }
  return v;
}

Fields decode(const std::string& s) {
  Fields f;
  std::size_t i = 0;
  while (i < s.size()) {
    const std::uint64_t key = read_varint(s, i);
    const auto field = static_cast<std::uint32_t>(key >> 3);
    if ((key & 7) == 0) {
      f.varints.emplace(field, read_varint(s, i));
    } else {
      REQUIRE((key & 7) == 2);
      const std::uint64_t n = read_varint(s, i);
      f.bytes.emplace(field, s.substr(i, n));
      i += n;
    }
  }
  return f;
}

std::vector<std::uint64_t> packed(const std::string& s) {
  std::vector<std::uint64_t> out;
  std::size_t i = 0;
  while (i < s.size()) out.push_back(read_varint(s, i));
  return out;
}

}  // namespace

TEST_SUITE("export/pprof") {
  TEST_CASE("an inlined frame is a line of its caller's location, and samples carry four values") {
    HeapReport r;
    r.dump.modules.push_back(ModuleInfo{});
    r.dump.modules[0].path = "/bin/app";
    r.dump.modules[0].build_id = {std::byte{0xab}, std::byte{0xcd}};
    // helper() inlined into work() at one address; main() at another.
    r.sites.frames = {{"helper", "a.cc", 3, "/bin/app", 0x100, true},
                      {"work", "a.cc", 9, "/bin/app", 0x100, false},
                      {"main", "a.cc", 20, "/bin/app", 0x200, false}};
    CallSite site;
    site.frames = {0, 1, 2};
    site.allocations = 4;
    site.allocated_bytes = 400;
    site.leaked_count = 1;
    site.leaked_bytes = 100;
    r.sites.sites = {site};

    const Fields profile = decode(gunzip(export_pprof({&r})));
    std::vector<std::string> strings;
    for (auto [it, end] = profile.bytes.equal_range(6); it != end; ++it) strings.push_back(it->second);
    REQUIRE(profile.bytes.count(1) == 4);
    CHECK(strings[decode(profile.bytes.find(1)->second).varints.find(1)->second] == "alloc_objects");

    REQUIRE(profile.bytes.count(4) == 2);  // two addresses
    const Fields first = decode(profile.bytes.find(4)->second);
    CHECK(first.bytes.count(4) == 2);  // helper then work
    const Fields mapping = decode(profile.bytes.find(3)->second);
    CHECK(strings[mapping.varints.find(6)->second] == "abcd");
    CHECK(strings[mapping.varints.find(5)->second] == "/bin/app");

    REQUIRE(profile.bytes.count(2) == 1);
    const Fields sample = decode(profile.bytes.find(2)->second);
    CHECK(packed(sample.bytes.find(1)->second).size() == 2);  // leaf first: work's location, main's
    CHECK(packed(sample.bytes.find(2)->second) == std::vector<std::uint64_t>{4, 400, 1, 100});
  }
}
