// CompressedOutput read back with zstd's and zlib's own decoders: the name
// picks the codec, many buffers' worth of writes and mid-stream flushes make
// one valid stream, and a sink that refuses bytes is an error, never a
// silently short file.
#include "export/compressed_output.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "support/decompress.h"

using namespace memrec;
using namespace memrec::analyzer;
using memrec::test::gunzip;
using memrec::test::unzstd;

namespace {

// Over a MB of lines like heaptrack's, in writes of uneven sizes with a
// flush now and then, as the export's writers do.
std::string write_lines(std::ostream& out) {
  std::string all;
  for (int i = 0; i < 200000; ++i) {
    const std::string line = "+ " + std::to_string(i * 7919 % 100003) + (i % 3 == 0 ? " x\n" : "\n");
    out << line;
    all += line;
    if (i % 50000 == 0) out.flush();
  }
  return all;
}

std::string compressed(Compression compression, std::string& written) {
  std::ostringstream sink;
  auto output = CompressedOutput::open(compression, sink, "out");
  REQUIRE(output.ok());
  written = write_lines((*output)->stream());
  REQUIRE((*output)->finish().ok());
  return std::move(sink).str();
}

// A sink that takes `room` bytes and then refuses, like a full disk.
class FullDisk final : public std::streambuf {
 public:
  explicit FullDisk(std::size_t room) : room_(room) {}

 protected:
  std::streamsize xsputn(const char*, std::streamsize n) override {
    const auto taken = std::min<std::streamsize>(n, static_cast<std::streamsize>(room_));
    room_ -= static_cast<std::size_t>(taken);
    return taken;
  }
  int_type overflow(int_type ch) override { return xsputn(nullptr, 1) == 1 ? ch : traits_type::eof(); }

 private:
  std::size_t room_;
};

}  // namespace

TEST_SUITE("export/compressed_output") {
  TEST_CASE("the output's name picks the compression") {
    CHECK(compression_for_name("run.heaptrack.zst") == Compression::kZstd);
    CHECK(compression_for_name("run.heaptrack.gz") == Compression::kGzip);
    CHECK(compression_for_name("run.heaptrack") == Compression::kNone);
    CHECK(compression_for_name("run.zstd") == Compression::kNone);
    CHECK(compression_for_name("gz") == Compression::kNone);
  }

  TEST_CASE("zstd output decodes to exactly what was written") {
    std::string written;
    const std::string data = compressed(Compression::kZstd, written);
    CHECK(data.size() < written.size() / 2);
    CHECK(unzstd(data) == written);
  }

  TEST_CASE("gzip output decodes to exactly what was written") {
    std::string written;
    const std::string data = compressed(Compression::kGzip, written);
    CHECK(data.size() < written.size() / 2);
    CHECK(gunzip(data) == written);
  }

  TEST_CASE("no compression passes the bytes through") {
    std::string written;
    CHECK(compressed(Compression::kNone, written) == written);
  }

  TEST_CASE("nothing written still makes a valid, empty stream") {
    for (const Compression c : {Compression::kZstd, Compression::kGzip}) {
      std::ostringstream sink;
      auto output = CompressedOutput::open(c, sink, "out");
      REQUIRE(output.ok());
      REQUIRE((*output)->finish().ok());
      const std::string data = std::move(sink).str();
      CHECK_FALSE(data.empty());
      CHECK((c == Compression::kZstd ? unzstd(data) : gunzip(data)).empty());
    }
  }

  TEST_CASE("a sink that refuses bytes is an I/O error naming the output") {
    for (const Compression c : {Compression::kZstd, Compression::kGzip, Compression::kNone}) {
      CAPTURE(static_cast<int>(c));
      FullDisk disk(1000);
      std::ostream sink(&disk);
      auto output = CompressedOutput::open(c, sink, "run.heaptrack.zst");
      REQUIRE(output.ok());
      write_lines((*output)->stream());
      const Status done = (*output)->finish();
      REQUIRE_FALSE(done.ok());
      CHECK(done.error().code == ErrorCode::kIo);
      CHECK(done.error().message.find("cannot write run.heaptrack.zst") == 0);
    }
  }
}
