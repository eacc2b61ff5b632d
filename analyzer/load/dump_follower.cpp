// A step maps the file afresh (it has grown), indexes the envelopes from
// where the last step stopped, decodes the new frames in parallel and folds
// them in order. The releaser, the folder's per-tid state and the stack
// table persist between steps: nothing read before is read again.
#include "load/dump_follower.h"

#include <algorithm>
#include <charconv>
#include <utility>
#include <vector>

#include "common/parallel_for.h"
#include "load/event_releaser.h"
#include "load/frame_folder.h"
#include "load/frame_pipeline.h"
#include "memrec/reader/dump_reader.h"
#include "memrec/reader/frame_times.h"

namespace memrec::analyzer {
namespace {

constexpr std::uint64_t kNever = reader::kNoEventTime;

// The recorder's flush interval, from the options its header lists (0 if
// absent): a frame is written at least this often, so its events are at
// most about this much older than the newest event of the frames before.
std::uint64_t flush_interval_ns(const reader::FileHeader& header) {
  for (const auto& [key, value] : header.options) {
    if (key != "flush_interval_ms") continue;
    std::uint64_t ms = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
    if (ec == std::errc() && end == value.data() + value.size() && ms < (std::uint64_t{1} << 32)) return ms * 1'000'000;
  }
  return 0;
}

}  // namespace

DumpFollower::DumpFollower(std::string path, FollowOptions options, OrderedEventSink& sink)
    : path_(std::move(path)), options_(std::move(options)), sink_(sink) {
  stats_.dump.path = path_;
  releaser_ = std::make_unique<EventReleaser>(
      sink_, stats_, options_.load.held_in_memory,
      options_.load.spill_dir.empty() ? default_spill_directory() : options_.load.spill_dir);
}

DumpFollower::~DumpFollower() = default;

void DumpFollower::release(std::uint64_t bound) {
  if (bound <= released_before_) return;
  releaser_->release_before(bound);
  released_before_ = bound;
}

void DumpFollower::finish() {
  release(kNever);
  finished_ = true;
}

Result<FollowStep> DumpFollower::step() {
  FollowStep result;
  if (finished_ || stopped()) return result;
  auto file = reader::MappedFile::open(path_);
  if (!file) return file.error();
  LoadedDump& d = stats_.dump;
  if (next_offset_ == 0) {
    auto header = reader::parse_file_header(file->bytes(), path_);
    if (!header) return header.error();
    d.header = *header;
    next_offset_ = header->size_bytes;
    hold_back_ns_ = std::max(options_.hold_back_ns, 2 * flush_interval_ns(*header));
  }
  auto index = reader::index_frames(file->bytes(), next_offset_, d.header.version, path_);
  if (!index) {
    stats_.stopped = index.error();
    result.error = index.error();
    return result;
  }
  reader::Dump dump{std::move(*file), d.header, std::move(*index)};
  const std::vector<reader::FrameInfo>& frames = dump.index.frames;
  const std::size_t n = frames.size();
  // later[i]: no frame after i in this step holds an event earlier than
  // this (a frame without a note, from an older recorder, holds all back).
  std::vector<std::uint64_t> later(n, kNever);
  for (std::size_t i = n; i-- > 1;) later[i - 1] = std::min(later[i], frames[i].earliest_ns.value_or(0));

  StackBuilder stacks(d.stacks, options_.load);
  if (!folder_) folder_ = std::make_unique<FrameFolder>(d, stacks, options_.load);
  folder_->use(stacks);
  const std::uint64_t events_before = stats_.events;
  const unsigned threads = options_.load.threads != 0 ? options_.load.threads : worker_threads();
  if (n != 0) {
    FramePipeline pipeline(dump, threads, FramePipeline::window_for(dump, threads, std::size_t{threads} << 20));
    for (std::size_t i = 0; i < n; ++i) {
      DecodedFrame& frame = pipeline.wait(i);
      if (!frame.status.ok()) {
        // kTruncated: a frame reaching into zeros not written yet; read it again next step.
        if (frame.status.error().code != ErrorCode::kTruncated) {
          stats_.stopped = frame.status.error();
          result.error = frame.status.error();
        }
        break;
      }
      if (frame.data.earliest_event_ns < released_before_) {
        result.out_of_order = true;
        break;
      }
      folder_->add_meta(frame.data);
      releaser_->add(d, frame.data);
      next_offset_ = frames[i].end_offset();
      ++result.frames;
      ++d.facts.frames;
      const std::uint64_t newest = d.last_time_ns.value_or(0);
      const std::uint64_t horizon = newest > hold_back_ns_ ? newest - hold_back_ns_ : 0;
      release(std::min(later[i], horizon));
      pipeline.release(i);
    }
  }
  if (const auto failed = stacks.finish()) return Error{ErrorCode::kInternal, path_ + ": " + *failed};
  d.facts.file_bytes = dump.file_bytes();
  d.facts.truncated_at.reset();
  if (next_offset_ < dump.file_bytes()) d.facts.truncated_at = next_offset_;
  // An End or Exec record: nothing follows it, every event may go.
  if (!result.out_of_order && !result.error && d.facts.ended()) finish();
  result.events = stats_.events - events_before;
  return result;
}

}  // namespace memrec::analyzer
