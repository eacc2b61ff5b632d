// memrec export's filter options: parsed before any dump is read, each bad
// value a usage error naming its option; and the call-site conditions
// (reports/site_match.h) they share with memrec view.
#include "export/allocation_selection.h"

#include <doctest/doctest.h>

#include "reports/site_match.h"

namespace memrec::analyzer {
namespace {

CallSites two_sites() {
  CallSites cs;
  cs.frames = {SiteFrame{"leak_here", "leak_three.c", 8, "/bin/leak_three", 0x1189, false},
               SiteFrame{"main", "leak_three.c", 30, "/bin/leak_three", 0x1200, false},
               SiteFrame{"", "", 0, "/lib/libc.so.6", 0x2a000, false}};
  cs.sites.resize(2);
  cs.sites[0].frames = {0, 1};
  cs.sites[1].frames = {2, 1};
  return cs;
}

}  // namespace

TEST_SUITE("export/allocation_selection") {
  TEST_CASE("sizes take whole bytes with binary or decimal units") {
    ExportFilterOptions o;
    o.min_size = "4KiB";
    o.max_size = "1M";
    const auto f = parse_export_filter(o);
    REQUIRE(f.ok());
    CHECK(f->min_size == 4096);
    CHECK(f->max_size == 1048576);
    CHECK(f->any);
    o.min_size = "2KB";
    o.max_size = "4242";
    CHECK(parse_export_filter(o)->min_size == 2000);
    CHECK(parse_export_filter(o)->max_size == 4242);
  }

  TEST_CASE("lifetimes and the instant are time specs") {
    ExportFilterOptions o;
    o.min_lifetime = "1.5ms";
    o.alive_at = "450ms";
    const auto f = parse_export_filter(o);
    REQUIRE(f.ok());
    CHECK(f->min_life_ns == 1500000);
    CHECK(f->max_life_ns == ~0ull);
    CHECK(f->alive_at_ns == 450000000);
  }

  TEST_CASE("no option is no filter") {
    const auto f = parse_export_filter({});
    REQUIRE(f.ok());
    CHECK_FALSE(f->any);
    CHECK_FALSE(f->per_dump);
  }

  TEST_CASE("a thread or a site makes the filter one dump's") {
    ExportFilterOptions o;
    o.thread_index = "2";
    const auto f = parse_export_filter(o);
    REQUIRE(f.ok());
    CHECK(f->per_dump);
    CHECK(f->thread_index == 2u);
  }

  TEST_CASE("each bad value is a usage error naming its option") {
    const auto error_of = [](ExportFilterOptions o) {
      const auto f = parse_export_filter(o);
      REQUIRE_FALSE(f.ok());
      CHECK(f.error().code == ErrorCode::kUsage);
      return f.error().message;
    };
    ExportFilterOptions size;
    size.min_size = "4 KiB";
    CHECK(error_of(size).find("--min-size '4 KiB'") != std::string::npos);
    ExportFilterOptions life;
    life.max_lifetime = "soon";
    CHECK(error_of(life).find("--max-lifetime") != std::string::npos);
    ExportFilterOptions regex;
    regex.match = "(";
    CHECK(error_of(regex).find("not a valid regular expression") != std::string::npos);
    ExportFilterOptions thread;
    thread.thread_index = "-1";
    CHECK(error_of(thread).find("--thread-index '-1'") != std::string::npos);
    ExportFilterOptions upside_down;
    upside_down.min_size = "10";
    upside_down.max_size = "9";
    CHECK(error_of(upside_down) == "export: --min-size is larger than --max-size");
  }

  TEST_CASE("match searches each function and module name on its own; search looks in frame labels") {
    const CallSites cs = two_sites();
    CHECK(sites_matching(cs, *compile_match("^leak_")) == std::vector<bool>{true, false});
    CHECK(sites_matching(cs, *compile_match("libc\\.so")) == std::vector<bool>{false, true});
    CHECK(sites_matching(cs, *compile_match("three$")) == std::vector<bool>{true, true});
    CHECK(sites_matching(cs, *compile_match("^main$")) == std::vector<bool>{true, true});
    // Names are not joined: nothing spans a function and its module.
    CHECK(sites_matching(cs, *compile_match("here.*bin")) == std::vector<bool>{false, false});
    // An empty name is no line to match.
    CHECK(sites_matching(cs, *compile_match("^$")) == std::vector<bool>{false, false});
    // A frame without a function is labelled module+0xoffset, which search sees.
    CHECK(sites_with_label(cs, "leak_here") == std::vector<bool>{true, false});
    CHECK(sites_with_label(cs, "libc.so.6+0x2a000") == std::vector<bool>{false, true});
    CHECK(sites_with_label(cs, "leak_three") == std::vector<bool>{false, false});
  }

  TEST_CASE("match runs in linear time on names of any length") {
    // A 1,000,000-character name: std::regex's recursion overflowed the stack
    // on a tenth of it with this pattern, and took exponential time with the
    // nested star on a few dozen characters.
    CallSites cs;
    cs.frames = {SiteFrame{std::string(1'000'000, 'a') + "c", "", 0, "", 0x10, false},
                 SiteFrame{std::string(10'000, 'a'), "", 0, "", 0x20, false}};
    cs.sites.resize(2);
    cs.sites[0].frames = {0};
    cs.sites[1].frames = {1};
    CHECK(sites_matching(cs, *compile_match("^(a|b)*c$")) == std::vector<bool>{true, false});
    CHECK(sites_matching(cs, *compile_match("(a*)*b")) == std::vector<bool>{false, false});
    CHECK(sites_matching(cs, *compile_match("^a+$")) == std::vector<bool>{false, true});
    // RE2 refuses counts over 1000 when it compiles, with a message.
    CHECK(compile_match("a{10000}").error().message.find("invalid repetition size") != std::string::npos);
  }
}

}  // namespace memrec::analyzer
