// Reads the file header. A file that ends inside its header has nothing to
// offer (no frame can follow), so unlike a cut frame that is an error.
#include "memrec/reader/file_header_reader.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "byte_reader.h"
#include "memrec/format/records.h"

namespace memrec::reader {
namespace {

using format::kFileHeaderPrefixBytes;
using format::kFileMagic;

bool starts_like_magic(std::span<const std::byte> file) {
  const std::size_t n = std::min(file.size(), kFileMagic.size());
  return std::memcmp(file.data(), kFileMagic.data(), n) == 0;
}

}  // namespace

std::vector<std::string> split_cmdline(std::span<const std::byte> bytes) {
  std::vector<std::string> args;
  const auto* p = reinterpret_cast<const char*>(bytes.data());
  std::size_t start = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (p[i] != '\0') continue;
    args.emplace_back(p + start, i - start);
    start = i + 1;
  }
  if (start < bytes.size()) args.emplace_back(p + start, bytes.size() - start);
  return args;
}

Result<FileHeader> parse_file_header(std::span<const std::byte> file, std::string_view name) {
  if (file.empty()) {
    return Error{ErrorCode::kEmpty,
                 fmt::format("{}: empty file, not a memrec dump (the recording wrote nothing)", name)};
  }
  if (!starts_like_magic(file)) {
    return Error{ErrorCode::kBadMagic, fmt::format("{}: not a memrec dump (bad magic)", name)};
  }
  if (file.size() < kFileHeaderPrefixBytes) {
    return Error{ErrorCode::kTruncatedHeader,
                 fmt::format("{}: ends inside its file header ({} of {} bytes): the recording stopped before it began",
                             name, file.size(), kFileHeaderPrefixBytes)};
  }

  ByteReader prefix(file.first(kFileHeaderPrefixBytes));
  prefix.u32le();  // magic low half: checked above
  prefix.u32le();
  FileHeader h;
  h.version = prefix.u16le();
  prefix.u16le();  // reserved
  const std::uint32_t body_bytes = prefix.u32le();
  if (h.version == 0) return Error{ErrorCode::kCorrupt, fmt::format("{}: corrupt file header: format v0", name)};
  if (h.version > format::kFormatVersion) {
    return Error{ErrorCode::kVersion, fmt::format("{}: format v{} is newer than this memrec (v{}); upgrade memrec",
                                                  name, h.version, format::kFormatVersion)};
  }
  if (body_bytes > format::kMaxHeaderBodyBytes) {
    return Error{ErrorCode::kCorrupt, fmt::format("{}: corrupt file header: body of {} bytes is over the {} limit",
                                                  name, body_bytes, format::kMaxHeaderBodyBytes)};
  }
  h.size_bytes = kFileHeaderPrefixBytes + body_bytes;
  if (file.size() < h.size_bytes) {
    return Error{ErrorCode::kTruncatedHeader,
                 fmt::format("{}: ends inside its file header ({} of {} bytes): the recording stopped before it began",
                             name, file.size(), h.size_bytes)};
  }

  // The body's strings are bounded by the body itself (at most 1 MiB); a
  // command line may legitimately be longer than kMaxStringBytes.
  ByteReader body(file.subspan(kFileHeaderPrefixBytes, body_bytes));
  h.pid = body.varint();
  h.ppid = body.varint();
  h.start_wall_ns = body.varint();
  h.start_mono_ns = body.varint();
  h.page_size = body.varint();
  h.exe_path = std::string(body.string(body_bytes));
  h.cmdline = split_cmdline(body.bytes(body_bytes));
  const std::uint64_t option_count = body.varint();
  // Each option takes at least two bytes, so a count past that is corrupt
  // (and must not reserve gigabytes).
  if (body.ok() && option_count > body.remaining() / 2) body.fail("the option count exceeds the body");
  for (std::uint64_t i = 0; body.ok() && i < option_count; ++i) {
    std::string key(body.string(body_bytes));
    std::string value(body.string(body_bytes));
    if (body.ok()) h.options.emplace_back(std::move(key), std::move(value));
  }
  // Bytes after the known fields belong to a later minor addition: skipped.
  if (!body.ok()) {
    return Error{ErrorCode::kCorrupt, fmt::format("{}: corrupt file header: {} (at body byte {}); the file is damaged",
                                                  name, body.failure(), body.pos())};
  }
  return h;
}

}  // namespace memrec::reader
