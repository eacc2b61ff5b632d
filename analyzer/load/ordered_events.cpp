// The window of held-back events is two vectors per thread (Pending), empty
// and unallocated while the thread holds none; a heap over the threads that
// hold events, by their earliest, finds those with events to release without
// looking at the others, so a release costs the same with four threads or
// thousands. Each release merges the ready prefixes at once (merge_streams,
// which compares only stream heads and so keeps a thread's events in their
// recorded order even at equal times) and hands the merge on in one call, so
// that the replay can fetch its live blocks ahead across threads. When only
// one thread has events to release, they go out as they are.
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
#include "load/event_spill.h"
#include "load/spill_buffer.h"
#include "load/stream_merger.h"
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
      if (report && options.progress) options.progress(finished, steps);
    }
  };
  run_workers(threads, [&](unsigned worker) { work(worker == 0); });
  return earliest;
}

// The fewest events a thread reads back from the spill file at once.
constexpr std::uint64_t kMinReadBack = 16;

class Releaser {
 public:
  // `held_in_memory`: LoadOptions'. Events read back from the file may take
  // memory up to twice that.
  Releaser(OrderedEventSink& sink, StreamedDump& out, std::uint64_t held_in_memory, std::string spill_dir)
      : sink_(sink), out_(out), budget_(held_in_memory), spill_(std::move(spill_dir)) {}

  void add(const LoadedDump& dump, FrameData& data) {
    for (auto& [tid, events] : data.events) {
      if (events.empty()) continue;
      const std::uint32_t t = thread_index(dump, tid);
      if (t >= pending_.size()) pending_.resize(t + 1);
      if (spill(t, events)) continue;
      const bool was_empty = pending_[t].empty();
      held_ += events.size();
      pending_[t].add(events);
      if (was_empty) requeue(t);
    }
    out_.max_pending = std::max(out_.max_pending, held_ + spilled_);
    out_.max_in_memory = std::max(out_.max_in_memory, held_);
  }

  // Hands on, in merged order, every held event earlier than `bound`. With
  // events in the spill file, in steps: up to the earliest event still
  // there, then that thread reads its next events back, and so on.
  void release_before(std::uint64_t bound) {
    while (!spill_heads_.empty() && spill_heads_.front().time_ns < bound) {
      std::pop_heap(spill_heads_.begin(), spill_heads_.end(), later);
      const Head h = spill_heads_.back();
      spill_heads_.pop_back();
      if (!pending_[h.thread].spilled()) continue;  // read back whole when the file failed
      release_in_memory(h.time_ns);
      read_back(h.thread);
    }
    release_in_memory(bound);
  }

 private:
  // Sends thread t's events to the spill file when the memory budget is
  // spent, or when it already has events there (its order is kept: what is
  // in memory comes first, then the file's segments in order). False: they
  // stay in memory (the budget is not spent, or the file failed).
  bool spill(std::uint32_t t, std::vector<HeapEvent>& events) {
    Pending& q = pending_[t];
    if (!q.spilled() && held_ + events.size() <= budget_) return false;
    std::uint64_t offset = 0;
    if (!spill_.append(events, offset)) {
      while (q.spilled()) read_back(t, /*all=*/true);  // the file failed: bring all back, in order
      return false;
    }
    const bool first = !q.spilled();
    q.segments.push_back(Segment{offset, events.size(), events.front().time_ns});
    spilled_ += events.size();
    out_.spilled += events.size();
    events = std::vector<HeapEvent>();
    if (first) {
      ++spilling_;
      push_spill_head(t);  // read back when release_before() reaches it, not before
    }
    return true;
  }

  // Reads thread t's next events back from the file (all of them if `all`),
  // behind those it holds in memory. Its spill head, if it had one, was
  // taken off the heap. A thread holds no more of its events read back than
  // its share, taken when it reads, of twice the budget less what memory holds.
  void read_back(std::uint32_t t, bool all = false) {
    Pending& q = pending_[t];
    Segment& s = q.segments[q.segment_head];
    // What is left of twice the budget, shared among the threads with
    // events in the file.
    const std::uint64_t room = 2 * budget_ - std::min(held_, 2 * budget_);
    const std::uint64_t share = std::max(kMinReadBack, room / std::max<std::uint64_t>(spilling_, 1));
    const std::uint64_t n = all ? s.count : std::min(s.count, share);
    // One event more, when the segment goes on: its time is where the next
    // step of release_before() stops.
    read_buffer_.clear();
    spill_.read(s.offset, n + (n < s.count ? 1 : 0), read_buffer_);
    if (n < s.count) {
      s.first_ns = read_buffer_.back().time_ns;
      read_buffer_.pop_back();
      s.offset += n;
      s.count -= n;
    } else if (++q.segment_head == q.segments.size()) {
      q.segments = std::vector<Segment>();
      q.segment_head = 0;
      --spilling_;
    }
    spilled_ -= n;
    held_ += n;
    const bool was_empty = q.empty();
    q.add(read_buffer_);
    read_buffer_ = std::vector<HeapEvent>();  // add() may have taken its room; start afresh
    if (was_empty) requeue(t);
    if (q.spilled() && !all) push_spill_head(t);
    out_.max_in_memory = std::max(out_.max_in_memory, held_);
  }

  void push_spill_head(std::uint32_t t) {
    const Pending& q = pending_[t];
    spill_heads_.push_back(Head{q.segments[q.segment_head].first_ns, t});
    std::push_heap(spill_heads_.begin(), spill_heads_.end(), later);
  }

  // Hands on, in merged order, every event held in memory earlier than
  // `bound`; none in the spill file is.
  void release_in_memory(std::uint64_t bound) {
    ids_.clear();
    while (!heads_.empty() && heads_.front().time_ns < bound) {
      std::pop_heap(heads_.begin(), heads_.end(), later);
      ids_.push_back(heads_.back().thread);
      heads_.pop_back();
    }
    if (ids_.empty()) return;
    if (ids_.size() == 1) {
      // One thread has events to release (always so in a one-thread dump):
      // its own order is the merged order, no merge needed.
      const std::uint32_t t = ids_.front();
      emit(t, pending_[t].count_before(bound));
      requeue(t);
      return;
    }
    // The merge breaks ties by the order of its streams: by thread index.
    std::sort(ids_.begin(), ids_.end());
    streams_.clear();
    ready_.clear();
    for (const std::uint32_t t : ids_) {
      ready_.push_back(pending_[t].count_before(bound));
      streams_.push_back(pending_[t].contiguous_front(ready_.back()));
    }
    // In pieces of at most kMergeEvents: a release can hold many threads'
    // events (with thousands of threads, a good part of the dump), and
    // merged whole its copy was as large again.
    taken_.resize(ids_.size());
    for (;;) {
      merge_streams(streams_, ids_, kMergeEvents, merged_, merged_threads_, taken_);
      if (merged_.empty()) break;
      for (std::size_t i = 0; i < streams_.size(); ++i) streams_[i] = streams_[i].subspan(taken_[i]);
      sink_.on_merged(merged_, merged_threads_);
      out_.events += merged_.size();
    }
    for (std::size_t i = 0; i < ids_.size(); ++i) {
      take(ids_[i], ready_[i]);
      requeue(ids_[i]);
    }
  }

  // A run of a thread's events in the spill file, and the time of its first.
  struct Segment {
    std::uint64_t offset;  // in events
    std::uint64_t count;
    std::uint64_t first_ns;
  };

  // A thread's held events, in order: what is left of `older` from `head`
  // on, then `newer`. In a one-thread dump a release keeps back only the few
  // events at the next frame's earliest time or later; appending the next
  // frame's events behind them copied every frame (5 % of churn-1t's report,
  // on the replay thread). Those few now move to a vector of their own and
  // the frame comes in by swap. A merge of threads needs its events in one
  // span, so there the two are joined, in the frame's own list where it has
  // the room: a new list for each join, or two kept whole, took churn-2t's
  // report 9 MB more.
  struct Pending {
    std::vector<HeapEvent> older;
    std::vector<HeapEvent> newer;
    std::size_t head = 0;  // into older
    // Behind newer: the events in the spill file, from segment_head on.
    std::vector<Segment> segments;
    std::size_t segment_head = 0;

    bool spilled() const { return segment_head < segments.size(); }

    std::size_t older_left() const { return older.size() - head; }
    // Newer holds events only while older does too.
    bool empty() const { return older_left() == 0; }
    std::uint64_t front_ns() const { return older[head].time_ns; }
    void add(std::vector<HeapEvent>& events) {
      // A frame's list may be empty and yet reserved (a frame of one thread
      // that recorded no event): taking it would hold its room for nothing.
      if (events.empty()) return;
      if (older_left() == 0) {  // nothing held (newer is empty then too)
        older.swap(events);
        head = 0;
        return;
      }
      if (newer.empty() && older_left() <= events.size() / 8) {
        std::vector<HeapEvent>(older.begin() + static_cast<std::ptrdiff_t>(head), older.end()).swap(older);
        head = 0;
        newer.swap(events);
        return;
      }
      join();
      older.insert(older.end(), events.begin(), events.end());
    }
    // Older's rest and newer in one vector: the rest put in front of newer
    // when newer has the room (a frame's list is reserved for its largest
    // count), so that no new list is made and touched; else newer behind it.
    void join() {
      if (newer.capacity() - newer.size() >= older_left()) {
        newer.insert(newer.begin(), older.begin() + static_cast<std::ptrdiff_t>(head), older.end());
        older.swap(newer);
      } else {
        older.erase(older.begin(), older.begin() + static_cast<std::ptrdiff_t>(head));
        older.insert(older.end(), newer.begin(), newer.end());
      }
      head = 0;
      newer = std::vector<HeapEvent>();
    }
    // How many held events, from the front, are earlier than `bound`.
    std::size_t count_before(std::uint64_t bound) const {
      std::size_t n = 0;
      while (head + n < older.size() && older[head + n].time_ns < bound) ++n;
      if (head + n < older.size()) return n;
      std::size_t m = 0;
      while (m < newer.size() && newer[m].time_ns < bound) ++m;
      return n + m;
    }
    // The first `n` held events as one span (a merge of threads needs it).
    std::span<const HeapEvent> contiguous_front(std::size_t n) {
      if (n > older_left()) join();
      return std::span<const HeapEvent>(older).subspan(head, n);
    }
    // Drops the first `n` held events. A thread keeps no more memory than
    // twice the events it holds: none when it holds none, and the rest of a
    // list mostly spent is moved to one of its own. Otherwise every thread
    // waiting for its turn kept a frame's list whole, and with thousands of
    // threads alive at once that was most of the dump. Each move copies
    // fewer events than were spent since the last, so an event is copied
    // at most once more on the whole.
    void take(std::size_t n) {
      const std::size_t from_older = std::min(n, older_left());
      head += from_older;
      if (older_left() == 0 && !newer.empty()) {
        older.swap(newer);
        newer = std::vector<HeapEvent>();
        head = n - from_older;
      }
      if (older_left() == 0) {
        older = std::vector<HeapEvent>();  // not `= {}`: that clears and keeps the memory
        head = 0;
      } else if (head > older_left()) {
        std::vector<HeapEvent>(older.begin() + static_cast<std::ptrdiff_t>(head), older.end()).swap(older);
        head = 0;
      }
    }
  };

  // Hands on thread t's first `n` held events: older's, then newer's.
  void emit(std::size_t t, std::size_t n) {
    Pending& q = pending_[t];
    const std::size_t from_older = std::min(n, q.older_left());
    if (from_older != 0) {
      sink_.on_events(std::span<const HeapEvent>(q.older).subspan(q.head, from_older), static_cast<std::uint32_t>(t));
    }
    if (n > from_older) {
      sink_.on_events(std::span<const HeapEvent>(q.newer).first(n - from_older), static_cast<std::uint32_t>(t));
    }
    out_.events += n;
    take(t, n);
  }

  void take(std::size_t t, std::size_t n) {
    pending_[t].take(n);
    held_ -= n;
  }

  // A thread that holds events goes (back) into the heap by its earliest.
  void requeue(std::uint32_t t) {
    if (pending_[t].empty()) return;
    heads_.push_back(Head{pending_[t].front_ns(), t});
    std::push_heap(heads_.begin(), heads_.end(), later);
  }

  // LoadedDump::threads only grows, one entry per tid in first-appearance
  // order: index the entries added since the last miss, then look again.
  std::uint32_t thread_index(const LoadedDump& dump, std::uint64_t tid) {
    auto it = index_.find(tid);
    if (it != index_.end()) return it->second;
    for (; indexed_ < dump.threads.size(); ++indexed_) {
      index_.try_emplace(dump.threads[indexed_].tid, static_cast<std::uint32_t>(indexed_));
    }
    it = index_.find(tid);
    return it != index_.end() ? it->second : static_cast<std::uint32_t>(dump.threads.size());
  }

  // A thread holding events and the time of its earliest; `later` makes
  // std::push_heap's max-heap a min-heap by time.
  struct Head {
    std::uint64_t time_ns;
    std::uint32_t thread;
  };
  static bool later(const Head& a, const Head& b) { return a.time_ns > b.time_ns; }

  OrderedEventSink& sink_;
  StreamedDump& out_;
  const std::uint64_t budget_;
  std::vector<Pending> pending_;  // by thread index
  std::vector<Head> heads_;       // one per thread in pending_ that holds events in memory
  // One per thread with events in the spill file, by the time of the first.
  std::vector<Head> spill_heads_;
  EventSpill spill_;
  std::vector<HeapEvent> read_buffer_;
  std::uint64_t spilling_ = 0;  // threads with events in the file
  std::uint64_t spilled_ = 0;   // events there
  // A release: the threads with events ready (ids_), how many each (ready_),
  // their ready events, and their merge.
  std::vector<std::uint32_t> ids_;
  std::vector<std::size_t> ready_;
  std::vector<std::span<const HeapEvent>> streams_;
  std::vector<std::size_t> taken_;  // by position in ids_: events in the piece merged
  std::vector<HeapEvent> merged_;
  std::vector<std::uint32_t> merged_threads_;
  // 2 MiB of events, and their threads.
  static constexpr std::size_t kMergeEvents = std::size_t{1} << 16;
  std::unordered_map<std::uint64_t, std::uint32_t> index_;
  std::size_t indexed_ = 0;  // dump.threads entries in index_
  std::uint64_t held_ = 0;   // events in memory
};

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
  Releaser releaser(sink, out, options.held_in_memory,
                    options.spill_dir.empty() ? default_spill_directory() : options.spill_dir);
  const PageDropper pages(dump);
  const std::vector<reader::FrameInfo> frame_info = dump.index.frames;
  LoadOptions second = options;
  const std::size_t frames = earliest.size();
  const auto scanned = static_cast<std::size_t>(std::count_if(
      frame_info.begin(), frame_info.end(), [](const reader::FrameInfo& f) { return !f.earliest_ns.has_value(); }));
  second.progress = [&](std::size_t done, std::size_t) {
    if (options.progress) options.progress(scanned + done, scanned + frames);
  };
  const FrameEventsFn on_events = [&](const LoadedDump& d, std::size_t frame, FrameData& data) {
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
