// An output stream that compresses what is written to it on its way to
// another stream: zstd or gzip, chosen by the output file's name, since tools
// such as heaptrack_print pick their decompressor by the name alone. It
// streams a buffer at a time, so a file of hundreds of MB is never held whole;
// every zstd, zlib and write result is checked and becomes the Status of finish().
#pragma once

#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include "memrec/reader/result.h"

namespace memrec::analyzer {

enum class Compression { kNone, kGzip, kZstd };

// kZstd for a name ending in `.zst`, kGzip for `.gz`, kNone for any other.
Compression compression_for_name(std::string_view path);

// One compressed stream (gzip.cpp, zstd.cpp): compresses the bytes
// it is given and writes what comes out to the sink it was made with.
class Codec {
 public:
  virtual ~Codec() = default;
  // Compresses all of `in`; with `end`, then ends the
  // compressed stream. An error names `name`: kInternal when the compressor
  // refused, kIo when the sink did.
  virtual Status write(std::span<const char> in, bool end) = 0;
};
// What a codec returns when the sink refuses its bytes.
Error sink_error(const std::string& name);
Result<std::unique_ptr<Codec>> make_gzip_codec(std::ostream& sink, const std::string& name);
Result<std::unique_ptr<Codec>> make_zstd_codec(std::ostream& sink, const std::string& name);

class CompressedOutput {
 public:
  // Compresses into `sink`, which must outlive it; `name` is the output's
  // name for error messages. Fails only if the compressor cannot start.
  static Result<std::unique_ptr<CompressedOutput>> open(Compression compression, std::ostream& sink,
                                                        const std::string& name);
  ~CompressedOutput();
  CompressedOutput(const CompressedOutput&) = delete;
  CompressedOutput& operator=(const CompressedOutput&) = delete;

  // What the writer writes to (`sink` itself for kNone). A failure sets its
  // badbit; finish() says what it was.
  std::ostream& stream() { return stream_; }

  // Compresses what is still buffered, ends the compressed stream and
  // flushes the sink. Call it once, after the last write.
  [[nodiscard]] Status finish();

 private:
  class Buffer;
  CompressedOutput(std::unique_ptr<Buffer> buffer, std::ostream& sink, std::string name);

  std::unique_ptr<Buffer> buffer_;  // null for kNone
  std::ostream& sink_;
  std::ostream stream_;
  std::string name_;
};

}  // namespace memrec::analyzer
