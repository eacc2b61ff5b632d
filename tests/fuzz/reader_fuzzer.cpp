// libFuzzer target: feeds arbitrary bytes through the reader's whole path the
// way the analyzer reads a dump (open_dump, then a FrameDecoder per frame),
// then read_all; every frame that decodes is written again with the recorder's
// encoder and must read back the same. Built by scripts/fuzz (clang, libFuzzer,
// ASan, UBSan) and by meson with replay_main.cpp to replay the corpus. It must
// never crash, hang or allocate without bound: the checks trap when a promise breaks.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
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

// Checks what the decoder hands out against the limits the format sets, and
// writes every record again with the recorder's own encoder.
class ReencodingVisitor final : public RecordVisitor {
 public:
  // Canonical varints are never longer than the ones read, so `capacity`
  // (the payload's size) always holds the records again.
  explicit ReencodingVisitor(std::size_t capacity) : buffer_(capacity), out_(buffer_) {}

  std::uint64_t records = 0;
  std::span<const std::byte> written() const { return out_.written(); }

  void on_thread(const ThreadRecord& r) override { put(out_.thread(r.tid)); }
  void on_alloc(const AllocRecord& r) override {
    require(static_cast<unsigned>(r.fn) < format::kAllocFnCount);
    put(out_.alloc(r.fn, r.time_ns, r.addr, r.size, r.stack.value));
  }
  void on_free(const FreeRecord& r) override { put(out_.free(r.time_ns, r.addr)); }
  void on_realloc(const ReallocRecord& r) override {
    require(static_cast<unsigned>(r.fn) < format::kAllocFnCount);
    put(out_.realloc(r.fn, r.free_ns, r.old_addr, r.alloc_ns, r.new_addr, r.size, r.stack.value));
  }
  void on_mmap(const MmapRecord& r) override {
    // The encoder takes prot and flags as the u32 that mmap() has.
    if (r.prot > UINT32_MAX || r.flags > UINT32_MAX) return skip();
    put(out_.mmap(r.time_ns, r.addr, r.size, static_cast<std::uint32_t>(r.prot), static_cast<std::uint32_t>(r.flags),
                  r.stack.value));
  }
  void on_munmap(const MunmapRecord& r) override { put(out_.munmap(r.time_ns, r.addr, r.size)); }
  void on_mremap(const MremapRecord& r) override {
    put(out_.mremap(r.free_ns, r.old_addr, r.old_size, r.alloc_ns, r.new_addr, r.new_size, r.stack.value));
  }
  void on_stack(const StackRecord& r) override {
    require(r.ips.size() <= format::kMaxStackDepth);
    // As the writer does: the frames shared with the frame's stack before
    // are not repeated, so the record is never longer than the one read.
    put(out_.stack(r.id.value, r.module_gen, r.flags, r.ips, last_stack_));
    last_stack_ = r.ips;
  }
  void on_module_load(const ModuleLoadRecord& r) override {
    require(r.path.size() <= format::kMaxStringBytes && r.build_id.size() <= format::kMaxStringBytes);
    put(out_.module_load(r.id.value, r.gen, r.path, r.bias, r.build_id, r.segments));
  }
  void on_module_unload(const ModuleUnloadRecord& r) override { put(out_.module_unload(r.id.value, r.gen)); }
  void on_thread_start(const ThreadStartRecord& r) override {
    require(r.name.size() <= format::kMaxStringBytes);
    put(out_.thread_start(r.tid, r.time_ns, r.name));
  }
  void on_thread_name(const ThreadNameRecord& r) override {
    require(r.name.size() <= format::kMaxStringBytes);
    put(out_.thread_name(r.tid, r.name));
  }
  void on_thread_exit(const ThreadExitRecord& r) override { put(out_.thread_exit(r.tid, r.time_ns)); }
  void on_rss(const RssRecord& r) override { put(out_.rss(r.time_ns, r.rss_bytes)); }
  void on_recording(const RecordingRecord& r) override { put(out_.recording(r.time_ns, r.on, r.source)); }
  void on_counters(const CountersRecord& r) override {
    // The encoder's keys are the u8 Counter enum; later keys are kept by the
    // reader but cannot be written back.
    std::vector<format::CounterValue> values;
    for (const auto& [key, value] : r.values) {
      if (key > UINT8_MAX) return skip();
      values.push_back({static_cast<format::Counter>(key), value});
    }
    put(out_.counters(values));
  }
  void on_end(const EndRecord& r) override { put(out_.end(r.time_ns)); }
  void on_exec(const ExecRecord& r) override {
    require(r.path.size() <= format::kMaxStringBytes);
    put(out_.exec(r.time_ns, r.error, r.path));
  }
  void on_marker(const MarkerRecord& r) override {
    require(r.label.size() <= format::kMaxStringBytes);
    put(out_.marker(r.time_ns, r.source, r.label));
  }

  bool complete() const { return !skipped_; }

 private:
  void put(bool written) {
    require(written);
    ++records;
  }
  // A record the encoder cannot express: the frame is not compared.
  void skip() {
    skipped_ = true;
    ++records;
  }

  std::vector<std::byte> buffer_;
  format::RecordEncoder out_;
  std::vector<std::uint64_t> last_stack_;  // this frame's previous Stack record
  bool skipped_ = false;
};

// Decoding what the encoder wrote and encoding it again gives the same bytes:
// the reader reads exactly what the recorder writes.
void check_round_trip(std::span<const std::byte> reencoded, std::uint64_t records, std::uint64_t frame_offset) {
  ReencodingVisitor again(reencoded.size());
  require(decode_records(reencoded, kName, frame_offset, again).ok());
  require(again.records == records);
  const auto twice = again.written();
  require(twice.size() == reencoded.size() && std::equal(twice.begin(), twice.end(), reencoded.begin()));
}

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

void check_frame_error(const Error& error, const FrameInfo& frame) {
  require(names_file(error));
  require(error.code == ErrorCode::kCorrupt || (error.code == ErrorCode::kTruncated && frame.reaches_zero_tail));
}

// The analyzer's way: one decoder, frame by frame (FrameDecoder::decode in two
// steps, so nothing is allocated for a frame that does not decompress),
// stopping at the first failure. Returns the decompressed bytes it tried.
std::uint64_t stream_frames(const Dump& dump) {
  FrameDecoder decoder;
  std::uint64_t payload_bytes = 0;
  for (const FrameInfo& frame : dump.index.frames) {
    payload_bytes += frame.decompressed_bytes;
    // decode() reads columns without joining them. A columns byte can stand
    // for at most a ten-byte varint of version 1, hence the capacity.
    ReencodingVisitor direct(11 * frame.decompressed_bytes + 64);
    const Status direct_status = decoder.decode(dump.bytes(), frame, dump.name(), direct);
    if (!direct_status) check_frame_error(direct_status.error(), frame);
    const std::vector<std::byte> direct_bytes(direct.written().begin(), direct.written().end());
    const auto payload = decoder.decompress(dump.bytes(), frame, dump.name());
    if (!payload) {
      check_frame_error(payload.error(), frame);
      break;
    }
    // Version 1 hands the payload on; later versions drop the layout byte or join
    // its columns, which rebuild to at most kMaxFrameBytes of records.
    if (frame.format_version < 2) {
      require(payload->size() == frame.decompressed_bytes);
    } else {
      require(payload->size() <= format::kMaxFrameBytes);
    }
    ReencodingVisitor visitor(payload->size());
    const Status status = decode_records(*payload, dump.name(), frame.offset, visitor);
    // Every record takes at least its tag byte.
    require(visitor.records <= payload->size());
    // What decode() accepts the join accepts too, with the same records; it
    // may reject more (a record in `rest` must use exactly its length).
    if (direct_status) {
      require(status.ok() && direct.records == visitor.records);
      if (direct.complete() && visitor.complete()) {
        require(
            std::equal(direct_bytes.begin(), direct_bytes.end(), visitor.written().begin(), visitor.written().end()));
      }
    }
    if (!status) {
      check_frame_error(status.error(), frame);
      break;
    }
    if (visitor.complete()) check_round_trip(visitor.written(), visitor.records, frame.offset);
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
