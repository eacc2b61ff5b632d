// Opens a dump and, for read_all, decodes it whole. A dump cut short by a
// crash of the profiled program is normal input: keep every frame that
// decodes and note where the loss starts. A complete frame that does not
// decode is different: it is reported with the file and offset.
#include "memrec/reader/dump_reader.h"

#include <algorithm>
#include <utility>

namespace memrec::reader {
namespace {

// Keeps every record, and the facts read_all reports about the file.
class CollectingVisitor final : public RecordVisitor {
 public:
  CollectingVisitor(std::vector<Record>& out, DumpFacts& facts) : out_(out), facts_(facts) {}

  void on_thread(const ThreadRecord& r) override { out_.emplace_back(r); }
  void on_alloc(const AllocRecord& r) override { out_.emplace_back(r); }
  void on_free(const FreeRecord& r) override { out_.emplace_back(r); }
  void on_realloc(const ReallocRecord& r) override { out_.emplace_back(r); }
  void on_mmap(const MmapRecord& r) override { out_.emplace_back(r); }
  void on_munmap(const MunmapRecord& r) override { out_.emplace_back(r); }
  void on_mremap(const MremapRecord& r) override { out_.emplace_back(r); }
  void on_stack(const StackRecord& r) override { out_.emplace_back(r); }
  void on_module_load(const ModuleLoadRecord& r) override { out_.emplace_back(r); }
  void on_module_unload(const ModuleUnloadRecord& r) override { out_.emplace_back(r); }
  void on_thread_start(const ThreadStartRecord& r) override { out_.emplace_back(r); }
  void on_thread_name(const ThreadNameRecord& r) override { out_.emplace_back(r); }
  void on_thread_exit(const ThreadExitRecord& r) override { out_.emplace_back(r); }
  void on_rss(const RssRecord& r) override { out_.emplace_back(r); }
  void on_recording(const RecordingRecord& r) override { out_.emplace_back(r); }
  void on_counters(const CountersRecord& r) override {
    out_.emplace_back(r);
    facts_.note_counters(r);
  }
  void on_end(const EndRecord& r) override {
    out_.emplace_back(r);
    facts_.clean_end = true;
  }
  void on_exec(const ExecRecord& r) override {
    out_.emplace_back(r);
    facts_.note_exec(r);
  }
  void on_marker(const MarkerRecord& r) override { out_.emplace_back(r); }

 private:
  std::vector<Record>& out_;
  DumpFacts& facts_;
};

}  // namespace

void DumpFacts::note_counters(const CountersRecord& r) {
  constexpr auto kWriterKey = static_cast<std::uint64_t>(format::Counter::kWriter);
  std::uint64_t writer = 0;
  std::map<std::uint64_t, std::uint64_t> own;
  for (const auto& [key, value] : r.values) {
    if (key == kWriterKey) {
      writer = value;
    } else {
      own[key] = value;
    }
  }
  counters_by_writer[writer] = std::move(own);
  counters.clear();
  for (const auto& [w, values] : counters_by_writer) {
    for (const auto& [key, value] : values) counters[key] += value;
  }
}

void Dump::truncate_at_frame(std::size_t i) {
  if (i >= index.frames.size()) return;
  index.truncated_at = index.frames[i].offset;
  index.frames.resize(i);
}

void Dump::drop_cut_frames(std::span<const std::size_t> cut_frames) {
  if (!reads_past_cut_frames()) {
    if (!cut_frames.empty()) truncate_at_frame(cut_frames.front());
    return;
  }
  // The frames after the last one that decoded end the dump.
  std::size_t kept_end = index.frames.size();
  std::size_t trailing = cut_frames.size();
  while (trailing > 0 && cut_frames[trailing - 1] + 1 == kept_end) {
    --kept_end;
    --trailing;
  }
  if (kept_end < index.frames.size()) index.truncated_at = index.frames[kept_end].offset;
  std::vector<FrameInfo> kept;
  std::size_t next_cut = 0;
  for (std::size_t i = 0; i < kept_end; ++i) {
    const FrameInfo& frame = index.frames[i];
    if (next_cut < trailing && cut_frames[next_cut] == i) {
      ++next_cut;
      index.cut.push_back(CutFrame{frame.offset, frame.end_offset() - frame.offset});
    } else {
      kept.push_back(frame);
    }
  }
  index.frames = std::move(kept);
  // A frame cut inside its envelope reads as a short frame and then zeros:
  // one cut, listed once.
  std::sort(index.cut.begin(), index.cut.end(),
            [](const CutFrame& a, const CutFrame& b) { return a.offset < b.offset; });
  std::vector<CutFrame> merged;
  for (const CutFrame& c : index.cut) {
    if (!merged.empty() && merged.back().offset + merged.back().bytes == c.offset) {
      merged.back().bytes += c.bytes;
    } else {
      merged.push_back(c);
    }
  }
  index.cut = std::move(merged);
  // Space skipped after the last frame kept was the dump's end, not a gap.
  const std::uint64_t last_kept = index.frames.empty() ? 0 : index.frames.back().offset;
  while (!index.cut.empty() && index.cut.back().offset > last_kept) {
    const std::uint64_t at = index.cut.back().offset;
    index.truncated_at = std::min(index.truncated_at.value_or(at), at);
    index.cut.pop_back();
  }
}

Result<Dump> open_dump(MappedFile file) {
  auto header = parse_file_header(file.bytes(), file.path());
  if (!header) return header.error();
  auto index = index_frames(file.bytes(), header->size_bytes, header->version, file.path(),
                            [&file](std::uint64_t passed) { file.drop_pages(0, passed); });
  if (!index) return index.error();
  return Dump{std::move(file), std::move(*header), std::move(*index)};
}

Result<Dump> open_dump(const std::string& path) {
  auto file = MappedFile::open(path);
  if (!file) return file.error();
  return open_dump(std::move(*file));
}

Result<DumpContents> read_all(Dump& dump) {
  DumpContents out;
  out.facts.file_bytes = dump.file_bytes();
  CollectingVisitor visitor(out.records, out.facts);
  FrameDecoder decoder;
  std::vector<std::size_t> cut_frames;
  for (std::size_t i = 0; i < dump.index.frames.size(); ++i) {
    const std::size_t first_record = out.records.size();
    const Status status = decoder.decode(dump.bytes(), dump.index.frames[i], dump.name(), visitor);
    if (!status && status.error().code == ErrorCode::kTruncated) {
      cut_frames.push_back(i);
      if (dump.reads_past_cut_frames()) continue;
      break;
    }
    if (!status) return status.error();
    out.frame_first_record.push_back(first_record);
  }
  dump.drop_cut_frames(cut_frames);
  out.header = dump.header;
  out.frames = dump.index.frames;
  out.facts.frames = dump.index.frames.size();
  out.facts.truncated_at = dump.index.truncated_at;
  out.facts.cut = dump.index.cut;
  return out;
}

Result<DumpContents> read_all(const std::string& path) {
  auto dump = open_dump(path);
  if (!dump) return dump.error();
  return read_all(*dump);
}

}  // namespace memrec::reader
