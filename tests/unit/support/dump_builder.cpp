// Test-only dump writer: the encoder plus zstd, mirroring the preload's writer.
#include "support/dump_builder.h"

#include <unistd.h>
#include <zstd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <vector>

#include <doctest/doctest.h>

#include "memrec/format/frame_columns.h"

namespace memrec::testing {
namespace {

constexpr std::string_view kCmdline{"/usr/bin/demo\0--flag\0x y\0", 25};
const format::OptionPair kOptions[] = {{"max_depth", "128"}, {"output", "/tmp/x.dat"}};

}  // namespace

format::FileHeaderFields sample_header() {
  format::FileHeaderFields h;
  h.pid = 4242;
  h.ppid = 1;
  h.start_wall_ns = 1'700'000'000'000'000'000ull;
  h.start_mono_ns = 1'000'000;
  h.page_size = 4096;
  h.exe_path = "/usr/bin/demo";
  h.cmdline = std::as_bytes(std::span(kCmdline.data(), kCmdline.size()));
  h.options = kOptions;
  return h;
}

std::vector<std::byte> encode_header(const format::FileHeaderFields& fields) {
  std::vector<std::byte> buf(2u << 20);
  format::ByteWriter w(buf);
  REQUIRE(format::encode_file_header(w, fields));
  buf.resize(w.size());
  return buf;
}

std::vector<std::byte> encode_frame(std::span<const std::byte> payload) {
  std::vector<std::byte> out(format::kFrameEnvelopeBytes + ZSTD_compressBound(payload.size()));
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  REQUIRE(cctx != nullptr);
  REQUIRE(!ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1)));
  const std::size_t n = ZSTD_compress2(cctx, out.data() + format::kFrameEnvelopeBytes,
                                       out.size() - format::kFrameEnvelopeBytes, payload.data(), payload.size());
  ZSTD_freeCCtx(cctx);
  REQUIRE(!ZSTD_isError(n));
  format::encode_frame_envelope(std::span(out).first<format::kFrameEnvelopeBytes>(), static_cast<std::uint32_t>(n),
                                static_cast<std::uint32_t>(payload.size()));
  out.resize(format::kFrameEnvelopeBytes + n);
  return out;
}

std::vector<std::byte> columns_payload(std::span<const std::byte> records, ColumnCoding coding) {
  const std::size_t cap = format::column_capacity(records.size());
  std::vector<std::byte> scratch(format::kColumnCount * cap);
  format::ColumnBuffers columns;
  for (std::size_t i = 0; i < format::kColumnCount; ++i) columns[i] = std::span(scratch).subspan(i * cap, cap);
  std::vector<std::byte> out(3 * records.size() + 128);
  AgeTables tables;
  const std::uint8_t layout = coding == ColumnCoding::kSplit    ? format::kLayoutSplitColumns
                              : coding == ColumnCoding::kCarved ? format::kLayoutCarvedColumns
                              : coding == ColumnCoding::kAged   ? format::kLayoutAgedColumns
                                                                : format::kLayoutColumns;
  const std::size_t n = format::split_columns(records, columns, out, &tables.coder, layout);
  REQUIRE(n != 0);
  out.resize(n);
  return out;
}

DumpBuilder::DumpBuilder(const format::FileHeaderFields& fields, FrameLayout layout)
    : bytes_(encode_header(fields)), layout_(layout) {
  header_bytes_ = bytes_.size();
  if (layout == FrameLayout::kVersion1) bytes_[8] = std::byte{1};
  if (layout == FrameLayout::kCarvedColumns) bytes_[8] = std::byte{4};
  if (layout == FrameLayout::kAgedColumns) bytes_[8] = std::byte{3};
  if (layout == FrameLayout::kRingColumns) bytes_[8] = std::byte{2};
}

DumpBuilder& DumpBuilder::frame(const std::function<void(format::RecordEncoder&)>& fill) {
  std::vector<std::byte> payload(1u << 20);
  format::RecordEncoder enc(payload);
  enc.begin_frame();
  fill(enc);
  std::vector<std::byte> records(enc.written().begin(), enc.written().end());
  if (layout_ == FrameLayout::kColumns) records = columns_payload(records, ColumnCoding::kSplit);
  if (layout_ == FrameLayout::kCarvedColumns) records = columns_payload(records, ColumnCoding::kCarved);
  if (layout_ == FrameLayout::kAgedColumns) records = columns_payload(records, ColumnCoding::kAged);
  if (layout_ == FrameLayout::kRingColumns) records = columns_payload(records, ColumnCoding::kRings);
  if (layout_ == FrameLayout::kRecords) records.insert(records.begin(), std::byte{format::kLayoutRecords});
  const auto frame = encode_frame(records);
  frame_offsets_.push_back(bytes_.size());
  bytes_.insert(bytes_.end(), frame.begin(), frame.end());
  frame_ends_.push_back(bytes_.size());
  return *this;
}

DumpBuilder& DumpBuilder::raw(std::span<const std::byte> bytes) {
  bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
  return *this;
}

namespace {

// The files write_temp_file made, removed when the test binary exits so that
// runs of the suite do not pile dumps up in the temporary directory.
class TempFiles {
 public:
  ~TempFiles() {
    std::error_code ec;
    for (const auto& path : paths_) std::filesystem::remove(path, ec);
  }
  void add(const std::filesystem::path& path) {
    const std::lock_guard lock(mutex_);
    paths_.push_back(path);
  }

 private:
  std::mutex mutex_;
  std::vector<std::filesystem::path> paths_;
};

TempFiles& temp_files() {
  static TempFiles files;
  return files;
}

}  // namespace

std::string write_temp_file(std::span<const std::byte> bytes, const std::string& stem) {
  static std::atomic<int> counter{0};
  const auto dir = std::filesystem::temp_directory_path();
  const auto path = dir / ("memrec-unit-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + stem);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
  temp_files().add(path);
  return path.string();
}

std::vector<std::byte> to_bytes(std::string_view s) {
  const auto b = std::as_bytes(std::span(s.data(), s.size()));
  return {b.begin(), b.end()};
}

}  // namespace memrec::testing
