// Demangling of C++ and Rust linkage names; anything else passes through.
#include <doctest/doctest.h>

#include "symbolize/demangle.h"

using namespace memrec::analyzer;

TEST_SUITE("symbolize/demangle") {
  TEST_CASE("demangles C++ names with namespaces, templates and operators") {
    CHECK(demangle("_ZN2ns6WidgetIiE4makeEi") == "ns::Widget<int>::make(int)");
    CHECK(demangle("_ZN2nsltERKNS_6WidgetIiEES3_") == "ns::operator<(ns::Widget<int> const&, ns::Widget<int> const&)");
    CHECK(demangle("_Z3fooi.constprop.0") == "foo(int) [clone .constprop.0]");
  }

  TEST_CASE("drops the hash of a Rust legacy name and decodes its escapes") {
    CHECK(demangle("_ZN4core3fmt9Arguments6new_v117h0123456789abcdefE") == "core::fmt::Arguments::new_v1");
    CHECK(demangle("_ZN5alloc3vec12Vec$LT$T$GT$4push17h1111222233334444E") == "alloc::vec::Vec<T>::push");
  }

  TEST_CASE("demangles Rust v0 names when built with libiberty, and keeps them as they are otherwise") {
    const char* v0 = "_RINvNtCs9ltgdHTiPiY_4core3ptr13drop_in_placeNtNtCsaFPxhdhAaCP_5alloc6string6StringEB4_";
    if (demangles_rust_v0()) {
      CHECK(demangle(v0) == "core::ptr::drop_in_place::<alloc::string::String>");
      CHECK(demangle("_RNvCs1234_7mycrate3foo") == "mycrate::foo");
    } else {
      CHECK(demangle(v0) == v0);
    }
  }

  TEST_CASE("passes through names that are not mangled or do not decode") {
    CHECK(demangle("main") == "main");
    CHECK(demangle("sym_c_run") == "sym_c_run");
    CHECK(demangle("_Zq") == "_Zq");
    CHECK(demangle("") == "");
  }
}
