// gzip through zlib's deflate with windowBits 15 + 16 (the gzip wrapper):
// CompressedOutput's streaming codec, and pprof's whole-profile gzip_compress
// made with the same codec.
#include <zlib.h>

#include <algorithm>
#include <limits>
#include <sstream>
#include <vector>

#include "export/compressed_output.h"
#include "export/proto_writer.h"

namespace memrec::analyzer {
namespace {

class GzipCodec final : public Codec {
 public:
  GzipCodec(std::ostream& sink, std::string name) : sink_(sink), name_(std::move(name)), out_(64 * 1024) {}
  ~GzipCodec() override {
    if (started_) deflateEnd(&z_);
  }
  GzipCodec(const GzipCodec&) = delete;
  GzipCodec& operator=(const GzipCodec&) = delete;

  Status start() {
    const int rc = deflateInit2(&z_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    if (rc != Z_OK) return failed("could not start compressing", rc);
    started_ = true;
    return {};
  }

  // zlib counts input in uInt, so a larger span goes in pieces.
  Status write(std::span<const char> in, bool end) override {
    constexpr std::size_t kMaxPiece = std::numeric_limits<uInt>::max();
    do {
      const std::span<const char> piece = in.first(std::min(in.size(), kMaxPiece));
      in = in.subspan(piece.size());
      if (Status s = deflate_piece(piece, end && in.empty()); !s) return s;
    } while (!in.empty());
    return {};
  }

 private:
  Status deflate_piece(std::span<const char> in, bool end) {
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z_.avail_in = static_cast<uInt>(in.size());
    for (;;) {
      z_.next_out = reinterpret_cast<Bytef*>(out_.data());
      z_.avail_out = static_cast<uInt>(out_.size());
      const int rc = deflate(&z_, end ? Z_FINISH : Z_NO_FLUSH);
      const std::size_t made = out_.size() - z_.avail_out;
      // Z_BUF_ERROR only says this call could make no progress: harmless
      // while there is no input left, a stuck stream when finishing.
      if (rc != Z_OK && rc != Z_STREAM_END && !(rc == Z_BUF_ERROR && !end)) return failed("compression failed", rc);
      sink_.write(out_.data(), static_cast<std::streamsize>(made));
      if (!sink_) return sink_error(name_);
      // zlib's own loop (zpipe.c): done once deflate leaves output space
      // unused; when finishing, once it says the stream has ended.
      if (end ? rc == Z_STREAM_END : z_.avail_out != 0) return {};
    }
  }

  Error failed(const char* what, int rc) const {
    const char* detail = z_.msg != nullptr ? z_.msg : zError(rc);
    return Error{ErrorCode::kInternal, "gzip " + std::string(what) + " for " + name_ + ": " + detail};
  }

  std::ostream& sink_;
  std::string name_;
  std::vector<char> out_;
  z_stream z_{};
  bool started_ = false;
};

}  // namespace

Result<std::unique_ptr<Codec>> make_gzip_codec(std::ostream& sink, const std::string& name) {
  auto codec = std::make_unique<GzipCodec>(sink, name);
  if (Status s = codec->start(); !s) return s.error();
  return std::unique_ptr<Codec>(std::move(codec));
}

std::string gzip_compress(std::string_view data) {
  std::ostringstream out;
  auto codec = make_gzip_codec(out, "the profile");
  if (!codec || !(*codec)->write(std::span<const char>(data.data(), data.size()), true)) return {};
  return std::move(out).str();
}

}  // namespace memrec::analyzer
