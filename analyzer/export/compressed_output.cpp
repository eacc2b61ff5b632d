// The std::streambuf behind CompressedOutput: the writer fills a buffer, and
// each time it is full (or flushed) it goes through the codec to the sink.
// A codec error stops the stream and is kept for finish() to return.
#include "export/compressed_output.h"

#include <vector>

namespace memrec::analyzer {

Compression compression_for_name(std::string_view path) {
  if (path.ends_with(".zst")) return Compression::kZstd;
  if (path.ends_with(".gz")) return Compression::kGzip;
  return Compression::kNone;
}

Error sink_error(const std::string& name) {
  return Error{ErrorCode::kIo,
               "cannot write " + name + ": check the directory exists and is writable, and the disk has room"};
}

class CompressedOutput::Buffer final : public std::streambuf {
 public:
  explicit Buffer(std::unique_ptr<Codec> codec) : codec_(std::move(codec)), pending_(kPendingBytes) { reset(); }

  Status finish() {
    drain(true);
    ended_ = true;
    return status_;
  }

 protected:
  int_type overflow(int_type ch) override {
    if (!drain(false)) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }

  // Hands the buffer to the compressor without ending a zstd block or gzip
  // deflate block early: an ostream flush must not cost compression.
  int sync() override { return drain(false) ? 0 : -1; }

 private:
  // Large enough that the codec sees long runs; small beside the file.
  static constexpr std::size_t kPendingBytes = 256 * 1024;

  bool drain(bool end) {
    if (ended_) status_ = Error{ErrorCode::kInternal, "an export wrote on after its compressed stream ended"};
    if (!status_) return false;
    status_ = codec_->write(std::span<const char>(pbase(), pptr()), end);
    reset();
    return status_.ok();
  }
  void reset() { setp(pending_.data(), pending_.data() + pending_.size()); }

  std::unique_ptr<Codec> codec_;
  std::vector<char> pending_;
  Status status_;
  bool ended_ = false;
};

Result<std::unique_ptr<CompressedOutput>> CompressedOutput::open(Compression compression, std::ostream& sink,
                                                                 const std::string& name) {
  std::unique_ptr<Buffer> buffer;
  if (compression != Compression::kNone) {
    auto codec = compression == Compression::kZstd ? make_zstd_codec(sink, name) : make_gzip_codec(sink, name);
    if (!codec) return codec.error();
    buffer = std::make_unique<Buffer>(std::move(*codec));
  }
  return std::unique_ptr<CompressedOutput>(new CompressedOutput(std::move(buffer), sink, name));
}

CompressedOutput::CompressedOutput(std::unique_ptr<Buffer> buffer, std::ostream& sink, std::string name)
    : buffer_(std::move(buffer)),
      sink_(sink),
      stream_(buffer_ ? buffer_.get() : sink.rdbuf()),
      name_(std::move(name)) {}

CompressedOutput::~CompressedOutput() = default;

Status CompressedOutput::finish() {
  if (buffer_) {
    if (Status done = buffer_->finish(); !done) return done;
  } else {
    stream_.flush();
  }
  sink_.flush();
  if (!stream_ || !sink_) return sink_error(name_);
  return {};
}

}  // namespace memrec::analyzer
