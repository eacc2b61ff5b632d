// Which frame names a call site, on frames as the symbolizer gives them for
// real programs: a C++ service built by GCC 12 with -O2 -g against
// libstdc++, and Rust programs built by rustc (std from /rustc/<commit>/ or
// Debian's /usr/src/rustc-*/, hashbrown from the cargo registry).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "reports/site_label.h"

using namespace memrec::analyzer;

namespace {

constexpr const char* kExe = "/work/build/tests/programs/cpp_service";
constexpr const char* kRustExe = "/work/build/tests/programs/rust_service/rust_service";
constexpr const char* kStd = "/rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/";

SiteFrame frame(std::string function, std::string file, std::string module, bool inlined = false) {
  const std::uint32_t line = file.empty() ? 0 : 42;
  return SiteFrame{std::move(function), std::move(file), line, std::move(module), 0x1234, inlined};
}

// A call site whose frames are `frames`, innermost first.
CallSites one_site(const std::vector<SiteFrame>& frames) {
  CallSites cs;
  std::vector<std::uint32_t> ids;
  for (const SiteFrame& f : frames) {
    ids.push_back(static_cast<std::uint32_t>(cs.frames.size()));
    cs.frames.push_back(f);
  }
  cs.sites.push_back(CallSite{});
  cs.sites.back().frames = SiteFrames(ids);
  cs.sites.back().allocations = 1;
  label_sites(cs);
  return cs;
}

}  // namespace

TEST_SUITE("analyzer/site_label") {
  TEST_CASE("a C++ vector's growth is named by the program's function that pushed, via push_back") {
    const CallSites cs = one_site({
        frame("std::__new_allocator<char>::allocate(unsigned long, void const*)",
              "/usr/include/c++/12/bits/new_allocator.h", kExe, true),
        frame("std::allocator_traits<std::allocator<char> >::allocate(std::allocator<char>&, unsigned long)",
              "/usr/include/c++/12/bits/alloc_traits.h", kExe, true),
        frame("void std::vector<char, std::allocator<char> >::_M_realloc_insert<char const&>(__gnu_cxx::"
              "__normal_iterator<char*, std::vector<char, std::allocator<char> > >, char const&)",
              "/usr/include/c++/12/bits/vector.tcc", kExe),
        frame("std::vector<char, std::allocator<char> >::push_back(char const&)",
              "/usr/include/c++/12/bits/stl_vector.h", kExe, true),
        frame("record_request_log(std::vector<char, std::allocator<char> >&, int)",
              "/work/tests/programs/cpp_service.cpp", kExe),
        frame("worker(int)", "/work/tests/programs/cpp_service.cpp", kExe),
    });
    const SiteLabel l = site_label(cs, cs.sites[0]);
    CHECK(l.frame == 4);
    CHECK(l.text == "record_request_log");
    CHECK(l.via == "vector::push_back");
  }

  TEST_CASE("operator new in libstdc++ and std::string's internals are folded") {
    const CallSites cs = one_site({
        frame("operator new(unsigned long)", "", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"),
        frame("std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_create(unsigned "
              "long&, unsigned long)",
              "", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"),
        frame("(anonymous namespace)::render_response[abi:cxx11](int)", "/src/service.cpp", kExe),
    });
    const SiteLabel l = site_label(cs, cs.sites[0]);
    CHECK(l.frame == 2);
    CHECK(l.text == "(anonymous namespace)::render_response[abi:cxx11]");
    CHECK(l.via == "basic_string::_M_create");
  }

  TEST_CASE("a Rust Vec's growth is named by the program's function, via Vec::push") {
    const std::string std_path = kStd;
    const CallSites cs = one_site({
        frame("alloc::alloc::alloc", std_path + "alloc/src/alloc.rs", kRustExe, true),
        frame("alloc::alloc::Global::alloc_impl", std_path + "alloc/src/alloc.rs", kRustExe, true),
        frame("alloc::raw_vec::finish_grow", std_path + "alloc/src/raw_vec.rs", kRustExe),
        frame("alloc::raw_vec::RawVec<T,A>::grow_one", std_path + "alloc/src/raw_vec.rs", kRustExe),
        frame("alloc::vec::Vec<T,A>::push", std_path + "alloc/src/vec/mod.rs", kRustExe, true),
        frame("rust_service::build_response", "src/main.rs", kRustExe),
    });
    const SiteLabel l = site_label(cs, cs.sites[0]);
    CHECK(l.frame == 5);
    CHECK(l.text == "rust_service::build_response");
    CHECK(l.via == "Vec::push");
  }

  TEST_CASE("Debian's Rust std sources, hashbrown from the registry and __rust_alloc are library code") {
    CHECK(is_library_frame(
        frame("alloc::vec::Vec<T,A>::push", "/usr/src/rustc-1.63.0/library/alloc/src/vec/mod.rs", kRustExe)));
    CHECK(is_library_frame(frame("hashbrown::raw::RawTable<T,A>::reserve_rehash",
                                 "/usr/share/cargo/registry/hashbrown-0.12.3/src/raw/mod.rs", kRustExe)));
    CHECK(is_library_frame(frame("__rust_alloc", "", kRustExe)));
    CHECK(is_library_frame(frame("__rdl_alloc", "", kRustExe)));
    CHECK(is_library_frame(frame("<std::alloc::System as core::alloc::global::GlobalAlloc>::alloc", "", kRustExe)));
    CHECK(is_library_frame(frame("<alloc::string::String as core::clone::Clone>::clone", "", kRustExe)));
    CHECK(is_library_frame(frame("<str as alloc::string::ToString>::to_string", "", kRustExe)));
    CHECK(is_library_frame(frame("<alloc::vec::Vec<u8>>::push", "", kRustExe)));  // v0's inherent impl
    CHECK(is_library_frame(frame("malloc", "", "/usr/lib/x86_64-linux-gnu/libc.so.6")));
    CHECK(is_library_frame(frame("memrec::preload::record_alloc", "", "/opt/memrec/libmemrec.so")));
  }

  TEST_CASE("the program's own frames are never library code, whatever they call") {
    CHECK_FALSE(is_library_frame(frame("rust_service::cache_insert", "src/main.rs", kRustExe)));
    // A trait impl derived in the program: known file, not a library path.
    CHECK_FALSE(is_library_frame(
        frame("<rust_service::Entry as core::clone::Clone>::clone", "/work/rust_service/src/main.rs", kRustExe)));
    CHECK_FALSE(is_library_frame(frame("<rust_service::Entry as core::clone::Clone>::clone", "", kRustExe)));
    CHECK_FALSE(is_library_frame(frame("main::{lambda()#1}::operator()() const", "/src/a.cpp", kExe)));
    CHECK_FALSE(is_library_frame(frame("leak_here", "", kExe)));
    CHECK_FALSE(is_library_frame(frame("realloc_chain_step", "", kExe)));
    CHECK_FALSE(is_library_frame(frame("", "", kExe)));
  }

  TEST_CASE("a site with no program frame keeps its innermost frame as label") {
    const CallSites cs = one_site({
        frame("malloc", "", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
        frame("start_thread", "", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
    });
    CHECK(site_label(cs, cs.sites[0]).frame == 0);
    CHECK(site_label(cs, cs.sites[0]).via.empty());
  }

  TEST_CASE("--raw-frames labels every site by its innermost frame again") {
    CallSites cs = one_site({
        frame("operator new(unsigned long)", "", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"),
        frame("handle()", "/src/a.cpp", kExe),
    });
    CHECK(cs.sites[0].label_frame == 1);
    use_raw_frames(cs);
    CHECK(site_label(cs, cs.sites[0]).text == "operator new");
  }

  TEST_CASE("short names drop return types, argument lists and template arguments") {
    CHECK(short_function("std::vector<int, std::allocator<int> >::push_back(int const&)") ==
          "std::vector<…>::push_back");
    CHECK(
        short_function("void std::vector<char, std::allocator<char> >::_M_realloc_insert<char const&>(char const&)") ==
        "std::vector<…>::_M_realloc_insert<…>");
    CHECK(short_function("operator new(unsigned long)") == "operator new");
    CHECK(short_function("operator delete[](void*)") == "operator delete[]");
    CHECK(short_function("main::{lambda()#1}::operator()() const") == "main::{lambda()#1}::operator()");
    CHECK(short_function("std::operator<< <std::char_traits<char> >(std::ostream&, char const*)") ==
          "std::operator<< <…>");
    CHECK(short_function("rust_service::cache_insert") == "rust_service::cache_insert");
    CHECK(short_function("alloc::vec::Vec<T,A>::push") == "alloc::vec::Vec<…>::push");
    CHECK(via_name("<alloc::string::String as core::clone::Clone>::clone") == "String::clone");
    CHECK(via_name("std::collections::hash::map::HashMap<K,V,S>::insert") == "HashMap::insert");
    CHECK(via_name("<alloc::vec::Vec<u8>>::push") == "Vec::push");
    CHECK(via_name("alloc::vec::from_elem::<u8>") == "vec::from_elem");  // v0's turbofish
    CHECK(short_function("tokio::io::util::read_until::read_until_internal::<tokio::net::tcp::stream::TcpStream>") ==
          "tokio::io::util::read_until::read_until_internal");
    CHECK(via_name("std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > "
                   "std::operator+<char, std::char_traits<char>, std::allocator<char> >(char const*, "
                   "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >&&)") ==
          "std::operator+");
    CHECK(short_function("bool std::operator==<char>(std::basic_string<char> const&, char const*)") ==
          "std::operator==<…>");
    CHECK(short_function("std::vector<std::pair<std::map<int, std::vector<int> >, int>, std::allocator<int> >::"
                         "_M_realloc_insert(int&&)") == "std::vector<…>::_M_realloc_insert");
    CHECK(short_function("bool operator<(Key const&, Key const&)") == "operator<");
    CHECK(short_function("ns::Key::operator<(ns::Key const&) const") == "ns::Key::operator<");
    CHECK(short_function("std::ostream& operator<<(std::ostream&, Key const&)") == "operator<<");
    CHECK(short_function("std::_Function_handler<void (), main::{lambda()#1}>::_M_invoke(std::_Any_data const&)") ==
          "std::_Function_handler<…>::_M_invoke");
    CHECK(short_function("void std::sort<run()::<lambda()> >(run()::<lambda()>)") == "std::sort<…>");
    CHECK(short_function("rust_service::main::{{closure}}::{closure#0}") ==
          "rust_service::main::{{closure}}::{closure#0}");
    CHECK(short_function("<alloc::vec::Vec<T,A> as core::ops::drop::Drop>::drop") ==
          "<alloc::vec::Vec<…> as core::ops::drop::Drop>::drop");
    CHECK(short_function("<hashbrown::map::HashMap<K,V,S,A> as core::iter::traits::collect::Extend<(K,V)>>::extend::"
                         "<std::collections::hash::map::IntoIter<K,V>>") ==
          "<hashbrown::map::HashMap<…> as core::iter::traits::collect::Extend<…>>::extend");
  }

  TEST_CASE("grouping by label merges the paths to one line and sums their figures") {
    CallSites cs;
    cs.frames = {frame("alloc::alloc::alloc", std::string(kStd) + "alloc/src/alloc.rs", kRustExe),
                 SiteFrame{"rust_service::cache_insert", "src/main.rs", 10, kRustExe, 1, false},
                 frame("rust_service::poll_a", "src/main.rs", kRustExe),
                 frame("rust_service::poll_b", "src/main.rs", kRustExe),
                 SiteFrame{"rust_service::cache_insert", "src/main.rs", 11, kRustExe, 1, false}};
    const auto site = [](std::vector<std::uint32_t> ids, std::uint64_t bytes) {
      CallSite s;
      s.frames = SiteFrames(std::move(ids));
      s.allocated_bytes = bytes;
      s.leaked_bytes = bytes;
      s.allocations = 1;
      return s;
    };
    cs.sites = {site({0, 1, 2}, 100), site({0, 1, 3}, 300), site({0, 4, 2}, 7)};
    cs.site_of_stack = {{5, 0}, {6, 1}, {7, 2}};
    label_sites(cs);
    const CallSites g = group_by_label(cs);
    REQUIRE(g.sites.size() == 2);
    CHECK(g.sites[0].leaked_bytes == 400);
    CHECK(g.sites[0].allocations == 2);
    CHECK(g.sites[0].paths.size() == 2);
    CHECK(g.sites[0].frames == cs.sites[1].frames);  // the larger member's frames
    CHECK(g.sites[1].leaked_bytes == 7);
    CHECK(g.sites[1].paths.empty());
    CHECK(g.site_of_stack.at(5) == 0);
    CHECK(g.site_of_stack.at(6) == 0);
    CHECK(g.site_of_stack.at(7) == 1);
  }
}
