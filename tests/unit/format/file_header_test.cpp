// The file header: encode_file_header (format) against parse_file_header (reader).
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "memrec/format/file_header.h"
#include "memrec/reader/file_header_reader.h"
#include "support/dump_builder.h"

using namespace memrec;
using memrec::testing::encode_header;
using memrec::testing::sample_header;

namespace {

// Rewrites the u32 body length at offset 12.
void set_body_length(std::vector<std::byte>& file, std::uint32_t length) {
  for (int i = 0; i < 4; ++i)
    file[12 + static_cast<std::size_t>(i)] = std::byte{static_cast<std::uint8_t>(length >> (8 * i))};
}

}  // namespace

TEST_SUITE("format/file_header") {
  TEST_CASE("round-trips every field of the header") {
    const auto file = encode_header(sample_header());
    const auto h = reader::parse_file_header(file, "x.dat");
    REQUIRE(h.ok());
    CHECK(h->version == format::kFormatVersion);
    CHECK(h->pid == 4242);
    CHECK(h->ppid == 1);
    CHECK(h->start_wall_ns == 1'700'000'000'000'000'000ull);
    CHECK(h->start_mono_ns == 1'000'000);
    CHECK(h->page_size == 4096);
    CHECK(h->exe_path == "/usr/bin/demo");
    CHECK(h->cmdline == std::vector<std::string>{"/usr/bin/demo", "--flag", "x y"});
    REQUIRE(h->options.size() == 2);
    CHECK(h->options[0] == std::pair<std::string, std::string>{"max_depth", "128"});
    CHECK(h->options[1].second == "/tmp/x.dat");
    CHECK(h->size_bytes == file.size());
  }

  TEST_CASE("starts with the magic, the version and the body length") {
    const auto file = encode_header(sample_header());
    CHECK(std::memcmp(file.data(), "MEMRECDT", 8) == 0);
    CHECK(file[8] == std::byte{9});
    CHECK(file[9] == std::byte{0});
    const auto body = static_cast<std::size_t>(file[12]) | static_cast<std::size_t>(file[13]) << 8;
    CHECK(body + 16 == file.size());
  }

  TEST_CASE("round-trips maximal numbers and empty strings") {
    format::FileHeaderFields f;
    f.pid = ~0ull;
    f.ppid = 0;
    f.start_wall_ns = ~0ull;
    f.start_mono_ns = ~0ull - 1;
    const auto h = reader::parse_file_header(encode_header(f), "x.dat");
    REQUIRE(h.ok());
    CHECK(h->pid == ~0ull);
    CHECK(h->start_mono_ns == ~0ull - 1);
    CHECK(h->exe_path.empty());
    CHECK(h->cmdline.empty());
    CHECK(h->options.empty());
  }

  TEST_CASE("accepts a body longer than the fields it knows and starts frames after it") {
    auto file = encode_header(sample_header());
    const std::size_t known = file.size() - 16;
    file.insert(file.end(), {std::byte{0x07}, std::byte{0xff}, std::byte{0x00}});  // a future field
    set_body_length(file, static_cast<std::uint32_t>(known + 3));
    const auto h = reader::parse_file_header(file, "x.dat");
    REQUIRE(h.ok());
    CHECK(h->size_bytes == file.size());
    CHECK(h->pid == 4242);
  }

  TEST_CASE("reports a body cut short by its own length as corrupt") {
    auto file = encode_header(sample_header());
    set_body_length(file, 6);  // ends inside exe_path
    const auto h = reader::parse_file_header(file, "x.dat");
    REQUIRE_FALSE(h.ok());
    CHECK(h.error().code == ErrorCode::kCorrupt);
    CHECK(h.error().message.find("x.dat: corrupt file header") == 0);
  }

  TEST_CASE("names the file and the problem for a bad magic, a newer version and a cut header") {
    auto file = encode_header(sample_header());

    auto bad = file;
    bad[0] = std::byte{'X'};
    const auto magic = reader::parse_file_header(bad, "a.dat");
    REQUIRE_FALSE(magic.ok());
    CHECK(magic.error().code == ErrorCode::kBadMagic);
    CHECK(magic.error().message == "a.dat: not a memrec dump (bad magic)");

    auto newer = file;
    newer[8] = std::byte{10};
    const auto version = reader::parse_file_header(newer, "b.dat");
    REQUIRE_FALSE(version.ok());
    CHECK(version.error().code == ErrorCode::kVersion);
    CHECK(version.error().message.find("b.dat: format v10 is newer than this memrec (v9)") == 0);

    const auto cut = reader::parse_file_header(std::span(file).first(20), "c.dat");
    REQUIRE_FALSE(cut.ok());
    CHECK(cut.error().code == ErrorCode::kTruncatedHeader);

    const auto too_big = [&] {
      auto f = file;
      set_body_length(f, format::kMaxHeaderBodyBytes + 1);
      return reader::parse_file_header(f, "d.dat");
    }();
    REQUIRE_FALSE(too_big.ok());
    CHECK(too_big.error().code == ErrorCode::kCorrupt);
  }

  TEST_CASE("refuses to encode a body over the 1 MiB limit") {
    std::vector<std::byte> huge(format::kMaxHeaderBodyBytes + 1, std::byte{'a'});
    format::FileHeaderFields f;
    f.cmdline = huge;
    std::vector<std::byte> buf(3u << 20);
    format::ByteWriter w(buf);
    CHECK_FALSE(format::encode_file_header(w, f));
  }

  TEST_CASE("splits a command line at its NULs, with or without the last one") {
    using reader::split_cmdline;
    const auto b = [](std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); };
    CHECK(split_cmdline(b(std::string_view("a\0bc\0", 5))) == std::vector<std::string>{"a", "bc"});
    CHECK(split_cmdline(b(std::string_view("a\0bc", 4))) == std::vector<std::string>{"a", "bc"});
    CHECK(split_cmdline(b(std::string_view("a\0\0", 3))) == std::vector<std::string>{"a", ""});
    CHECK(split_cmdline({}).empty());
  }
}
