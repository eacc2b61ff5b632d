// libFuzzer target: feeds arbitrary bytes through the reader's whole path, the
// way the analyzer reads a dump (open_dump, then a FrameDecoder per frame), then
// read_all. Built by scripts/fuzz (clang, -fsanitize=fuzzer,address,undefined)
// and, with replay_main.cpp, by meson to replay the corpus. It must never crash,
// hang or allocate without bound; the checks below trap on a broken promise.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "memrec/reader/dump_reader.h"

namespace {

using namespace memrec;
using namespace memrec::reader;

constexpr std::string_view kName = "fuzz-input.dat";

// read_all keeps every record (~100 bytes each) in memory; a tiny hostile file
// can promise 64 MiB of payload per frame, so only small dumps go through it.
constexpr std::uint64_t kReadAllMaxPayloadBytes = 1u << 20;

// A broken promise of the reader: crash so that libFuzzer keeps the input.
void require(bool promise) {
  if (!promise) __builtin_trap();
}

bool names_file(const Error& error) { return std::string_view(error.message).starts_with(kName); }

// Checks what the decoder hands out against the limits the format sets.
class CheckingVisitor final : public RecordVisitor {
 public:
  std::uint64_t records = 0;

  void on_thread(const ThreadRecord&) override { ++records; }
  void on_alloc(const AllocRecord& r) override {
    require(static_cast<unsigned>(r.fn) < format::kAllocFnCount);
    ++records;
  }
  void on_free(const FreeRecord&) override { ++records; }
  void on_realloc(const ReallocRecord& r) override {
    require(static_cast<unsigned>(r.fn) < format::kAllocFnCount);
    ++records;
  }
  void on_mmap(const MmapRecord&) override { ++records; }
  void on_munmap(const MunmapRecord&) override { ++records; }
  void on_mremap(const MremapRecord&) override { ++records; }
  void on_stack(const StackRecord& r) override {
    require(r.ips.size() <= format::kMaxStackDepth);
    ++records;
  }
  void on_module_load(const ModuleLoadRecord& r) override {
    require(r.path.size() <= format::kMaxStringBytes && r.build_id.size() <= format::kMaxStringBytes);
    ++records;
  }
  void on_module_unload(const ModuleUnloadRecord&) override { ++records; }
  void on_thread_start(const ThreadStartRecord& r) override {
    require(r.name.size() <= format::kMaxStringBytes);
    ++records;
  }
  void on_thread_name(const ThreadNameRecord& r) override {
    require(r.name.size() <= format::kMaxStringBytes);
    ++records;
  }
  void on_thread_exit(const ThreadExitRecord&) override { ++records; }
  void on_rss(const RssRecord&) override { ++records; }
  void on_recording(const RecordingRecord&) override { ++records; }
  void on_counters(const CountersRecord&) override { ++records; }
  void on_end(const EndRecord&) override { ++records; }
};

// Frames are back to back from the end of the header, inside the file, within
// the format's limits; truncation starts after the last complete frame.
void check_index(const Dump& dump) {
  std::uint64_t at = dump.header.size_bytes;
  for (const FrameInfo& frame : dump.index.frames) {
    require(frame.offset == at);
    require(frame.compressed_bytes <= format::kMaxFrameBytes && frame.decompressed_bytes <= format::kMaxFrameBytes);
    require(frame.end_offset() <= dump.file_bytes());
    at = frame.end_offset();
  }
  if (dump.index.truncated_at) require(*dump.index.truncated_at == at && at < dump.file_bytes());
}

// The analyzer's way: one decoder, frame by frame, stopping at the first
// failure. Returns the decompressed bytes of the frames it tried.
std::uint64_t stream_frames(const Dump& dump) {
  FrameDecoder decoder;
  std::uint64_t payload_bytes = 0;
  for (const FrameInfo& frame : dump.index.frames) {
    payload_bytes += frame.decompressed_bytes;
    CheckingVisitor visitor;
    const Status status = decoder.decode(dump.bytes(), frame, dump.name(), visitor);
    // Every record takes at least its tag byte.
    require(visitor.records <= frame.decompressed_bytes);
    if (!status) {
      const Error& error = status.error();
      require(names_file(error));
      require(error.code == ErrorCode::kCorrupt || (error.code == ErrorCode::kTruncated && frame.reaches_zero_tail));
      break;
    }
  }
  return payload_bytes;
}

void check_read_all(Dump& dump) {
  const std::size_t frames_before = dump.index.frames.size();
  const auto contents = read_all(dump);
  if (!contents) {
    require(names_file(contents.error()) && contents.error().code == ErrorCode::kCorrupt);
    return;
  }
  require(contents->frames.size() <= frames_before);
  require(contents->frame_first_record.size() == contents->frames.size());
  require(contents->facts.frames == contents->frames.size());
  for (std::size_t i = 1; i < contents->frame_first_record.size(); ++i) {
    require(contents->frame_first_record[i - 1] <= contents->frame_first_record[i]);
  }
  if (!contents->frame_first_record.empty()) require(contents->frame_first_record.back() <= contents->records.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto* first = reinterpret_cast<const std::byte*>(data);
  auto dump = open_dump(MappedFile::from_bytes(std::vector<std::byte>(first, first + size), std::string(kName)));
  if (!dump) {
    const ErrorCode code = dump.error().code;
    require(names_file(dump.error()));
    require(code == ErrorCode::kEmpty || code == ErrorCode::kBadMagic || code == ErrorCode::kVersion ||
            code == ErrorCode::kTruncatedHeader || code == ErrorCode::kCorrupt);
    return 0;
  }
  require(dump->header.size_bytes <= size);
  check_index(*dump);
  if (stream_frames(*dump) <= kReadAllMaxPayloadBytes) check_read_all(*dump);
  return 0;
}
