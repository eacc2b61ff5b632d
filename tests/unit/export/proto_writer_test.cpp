// The hand-written protobuf encoder and gzip of the pprof export.
#include "export/proto_writer.h"

#include <doctest/doctest.h>

#include <string>

#include "support/decompress.h"

using memrec::analyzer::gzip_compress;
using memrec::analyzer::ProtoWriter;

TEST_SUITE("export/proto_writer") {
  TEST_CASE("encodes a varint field as key then base-128 groups, low first") {
    ProtoWriter w;
    w.varint(1, 150);  // the example of the protobuf encoding guide
    CHECK(w.data() == std::string("\x08\x96\x01", 3));
  }

  TEST_CASE("encodes a zero varint and a large field number") {
    ProtoWriter w;
    w.varint(14, 0);
    CHECK(w.data() == std::string("\x70\x00", 2));
  }

  TEST_CASE("prefixes strings and nested messages with their length") {
    ProtoWriter inner;
    inner.varint(1, 1);
    ProtoWriter w;
    w.bytes(6, "abc");
    w.message(2, inner);
    CHECK(w.data() == std::string("\x32\x03"
                                  "abc"
                                  "\x12\x02\x08\x01",
                                  9));
  }

  TEST_CASE("packs repeated varints into one length-delimited field") {
    ProtoWriter w;
    w.packed(2, {1, 300, 0});
    CHECK(w.data() == std::string("\x12\x04\x01\xac\x02\x00", 6));
  }

  TEST_CASE("gzip output has the gzip magic and inflates back to the input") {
    const std::string input(10000, 'x');
    const std::string gz = gzip_compress(input);
    REQUIRE(gz.size() > 18);
    CHECK(static_cast<unsigned char>(gz[0]) == 0x1f);
    CHECK(static_cast<unsigned char>(gz[1]) == 0x8b);
    CHECK(memrec::test::gunzip(gz) == input);
  }
}
