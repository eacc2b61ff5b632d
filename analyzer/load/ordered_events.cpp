// stream_dump's two passes: the frames' earliest times first, then the
// frames folded in order through an EventReleaser (event_releaser.h), which
// holds events back until every later frame's earliest time is past them.
#include "load/ordered_events.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/parallel_for.h"
#include "load/event_releaser.h"
#include "memrec/reader/frame_times.h"

namespace memrec::analyzer {
namespace {

constexpr std::uint64_t kNever = reader::kNoEventTime;
static_assert(kNever == format::kNoEarliest, "a frame's note and the scan say \"no event\" alike");

// Gives back the pages of a frame read for the last time in this pass. The
// file's pages stay in the page cache, so a later touch is a minor fault;
// without this the whole mapped dump ends up in our RSS. Only for mmap()ed
// dumps (MappedFile maps regular files): on read-in memory DONTNEED would zero it.
class PageDropper {
 public:
  explicit PageDropper(const reader::Dump& dump) : bytes_(dump.bytes()) {
    struct stat st {};
    enabled_ = ::stat(dump.name().c_str(), &st) == 0 && S_ISREG(st.st_mode);
    page_ = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  }

  // Pages wholly inside [begin, end) of the file; the neighbours' edges stay.
  void drop(std::uint64_t begin, std::uint64_t end) const {
    if (!enabled_ || end > bytes_.size() || begin >= end) return;
    const auto base = reinterpret_cast<std::uintptr_t>(bytes_.data());
    const std::uintptr_t first = (base + begin + page_ - 1) & ~(page_ - 1);
    const std::uintptr_t last = (base + end) & ~(page_ - 1);
    if (first < last) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
  }
  void drop_frame(const reader::FrameInfo& f) const { drop(f.offset, f.end_offset()); }

  static void advise_random(std::span<const std::byte> bytes, const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
    const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    const auto base = reinterpret_cast<std::uintptr_t>(bytes.data());
    const std::uintptr_t first = base & ~(page - 1);
    ::madvise(reinterpret_cast<void*>(first), bytes.size() + (base - first), MADV_RANDOM);
  }

 private:
  std::span<const std::byte> bytes_;
  std::uintptr_t page_ = 4096;
  bool enabled_ = false;
};

// Pass one, on `threads` workers plus the caller (which reports progress: a
// frame scanned here and a frame decoded in pass two are a step each, and a
// noted frame is no step here).
// A frame that fails to decode gets kNever: the second pass stops there.
// A frame the scan reads but the decoder would reject may get an earlier
// time instead; that only holds events back longer, never changes their order.
std::vector<std::uint64_t> earliest_times(const reader::Dump& dump, unsigned threads, const LoadOptions& options) {
  const std::size_t n = dump.index.frames.size();
  std::vector<std::uint64_t> earliest(n, kNever);
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  const PageDropper pages(dump);
  pages.drop(0, dump.file_bytes());  // what indexing the frames faulted in
  // A frame's note says it without decompressing (FORMAT.md, "Frames"); the
  // second pass checks it. Only older dumps' frames are scanned.
  std::size_t noted = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (const auto& note = dump.index.frames[i].earliest_ns) {
      earliest[i] = *note;
      ++noted;
    }
  }
  if (noted == n) return earliest;
  const std::size_t steps = (n - noted) + n;
  const auto work = [&](bool report) {
    reader::FrameTimeScanner scanner;
    for (std::size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) {
      if (dump.index.frames[i].earliest_ns) continue;
      earliest[i] = scanner.earliest(dump.bytes(), dump.index.frames[i], dump.name());
      pages.drop_frame(dump.index.frames[i]);
      const std::size_t finished = done.fetch_add(1) + 1;
      if (report && options.load_progress) {
        options.load_progress(finished, steps, LoadProgress{0, dump.file_bytes(), 0});
      } else if (report && options.progress) {
        options.progress(finished, steps);
      }
    }
  };
  run_workers(threads, [&](unsigned worker) { work(worker == 0); });
  return earliest;
}

}  // namespace

Result<StreamedDump> stream_dump(const std::string& path, const LoadOptions& options, OrderedEventSink& sink) {
  auto file = reader::MappedFile::open(path);
  if (!file) return file.error();
  if (options.file_bytes != 0) file->keep_first(options.file_bytes);
  // Indexing reads a 12-byte envelope per frame; without this every read
  // faults in its neighbours too (fault-around, readahead): 64 KiB a frame.
  PageDropper::advise_random(file->bytes(), path);
  auto dump = reader::open_dump(std::move(*file));
  if (!dump) return dump.error();
  return stream_dump(std::move(*dump), options, sink);
}

Result<StreamedDump> stream_dump(reader::Dump dump, const LoadOptions& options, OrderedEventSink& sink) {
  unsigned threads = options.threads;
  if (threads == 0) threads = worker_threads();

  const std::vector<std::uint64_t> earliest = earliest_times(dump, threads, options);
  // bound[i]: no frame after i holds an event earlier than this.
  std::vector<std::uint64_t> bound(earliest.size(), kNever);
  for (std::size_t i = earliest.size(); i-- > 1;) bound[i - 1] = std::min(bound[i], earliest[i]);

  StreamedDump out;
  EventReleaser releaser(sink, out, options.held_in_memory,
                         options.spill_dir.empty() ? default_spill_directory() : options.spill_dir);
  const PageDropper pages(dump);
  const std::vector<reader::FrameInfo> frame_info = dump.index.frames;
  LoadOptions second = options;
  const std::size_t frames = earliest.size();
  const auto scanned = static_cast<std::size_t>(std::count_if(
      frame_info.begin(), frame_info.end(), [](const reader::FrameInfo& f) { return !f.earliest_ns.has_value(); }));
  LoadProgress read{0, frame_info.empty() ? 0 : frame_info.back().end_offset(), 0};
  second.progress = [&](std::size_t done, std::size_t) {
    if (options.load_progress) {
      read.bytes_read = done == 0 ? 0 : frame_info[done - 1].end_offset();
      options.load_progress(scanned + done, scanned + frames, read);
    } else if (options.progress) {
      options.progress(scanned + done, scanned + frames);
    }
  };
  const FrameEventsFn on_events = [&](const LoadedDump& d, std::size_t frame, FrameData& data) {
    for (const auto& [tid, events] : data.events) read.events += events.size();
    releaser.add(d, data);
    releaser.release_before(bound[frame]);
    pages.drop_frame(frame_info[frame]);
  };
  auto loaded = load_dump_streaming(std::move(dump), second, on_events, &out.stopped);
  if (!loaded) return loaded.error();
  releaser.release_before(kNever);  // a stop or a cut: what is held is all there is
  out.dump = std::move(*loaded);
  return out;
}

}  // namespace memrec::analyzer
