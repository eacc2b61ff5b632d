// The frame compressor: a static zstd context (it never allocates, so a final
// flush can run while another thread is stopped inside malloc), the level
// MEMREC_ZSTD_LEVEL=auto picks, and a frame compressed a chunk at a time
// between drains, then appended to the dump. One per writer thread
// (g_compressor is the main writer's); its writer thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "auto_level.h"
#include "memrec/format/column_encoder.h"

struct ZSTD_CCtx_s;

namespace memrec::preload {

// A frame ends once its columns hold kFrameSoftLimit bytes. Larger frames
// find more of their frees' allocations in the frame, where a free costs its
// age rather than a delta (FORMAT.md, "Columns"): with 512 KiB instead of 256,
// bench churn's dump is 3.95 bytes per allocation instead of 4.1, python3's
// a sixth smaller. 1 MiB would give 3.88 and another tenth off python3's, but
// the analyzer then holds 4 times the events per frame in flight, and its
// report on churn took 25 % longer (pages faulted afresh, more of them out of
// cache) and 40 % more memory. (Larger frames once made the recorder slower,
// when zstd sized its tables for the frame; they are those of a 256 KiB frame
// now, auto_level_params.) A file cut short loses at most one frame.
inline constexpr std::size_t kFrameSoftLimit = 512 << 10;
// A record other than Alloc and Free is encoded into a scratch buffer of this
// size before it is split into the columns.
inline constexpr std::size_t kRawBytes = 512 << 10;
// Each column is mapped this large, and a frame's columns together never pass
// it (ColumnEncoder checks their sum): room for the largest record past the
// soft limit.
inline constexpr std::size_t kColumnBytes = kFrameSoftLimit + kRawBytes + (64 << 10);
// A frame's payload: its layout byte, its directory and its columns.
inline constexpr std::size_t kPayloadBytes = kColumnBytes + 128;

// Where a frame may go in the file relative to the stacks' definitions
// (FORMAT.md, "Stack"): the main writer's frames define every stack below
// `defines_below` (0: none); a pool writer's frame uses stacks below
// `needs_below`, and is placed only once a frame defining them is written.
struct FramePlacement {
  std::uint32_t defines_below = 0;
  std::uint32_t needs_below = 0;
};

class FrameCompressor {
 public:
  using ColumnEnds = std::size_t[format::kColumnCount];

  // Maps the buffers and sets up the context, once per process (a fork child
  // keeps them); false if that failed.
  bool setup();
  // Where the next frame's payload goes, and where its columns end (0: none).
  // Free once finish() returned.
  std::span<std::byte> payload() const { return {payload_, kPayloadBytes}; }
  ColumnEnds& column_ends() { return column_ends_; }
  // The output buffer, free between frames (the header is encoded there).
  std::span<std::byte> scratch() const { return {zbuf_, zcap_}; }

  // Starts compressing the `payload_bytes` placed in payload(), a frame whose
  // earliest heap event is at `earliest_ns` (format::kNoEarliest: none) and
  // that took `fill_ns` to fill. False (the dump failed) if zstd refused.
  bool begin(std::size_t payload_bytes, std::uint64_t earliest_ns, std::uint64_t fill_ns, FramePlacement placement);
  // Compresses the next chunk, and appends the frame after its last.
  void step();
  // Compresses and appends the rest of the frame.
  void finish();
  bool compressing() const { return compressing_; }

  std::uint64_t frames() const { return frames_; }
  std::uint64_t bytes_written() const { return bytes_written_; }

  // In a fork child: a new dump, the same buffers and context memory.
  void reset_after_fork();

 private:
  void write_compressed();
  bool set_tables(int level);

  std::byte* payload_ = nullptr;  // kPayloadBytes
  std::byte* zbuf_ = nullptr;
  std::size_t zcap_ = 0;
  void* cctx_mem_ = nullptr;
  std::size_t cctx_bytes_ = 0;
  ZSTD_CCtx_s* cctx_ = nullptr;
  AutoLevel auto_level_;  // MEMREC_ZSTD_LEVEL=auto
  // The frame being compressed, a chunk at a time: its payload is in
  // `payload_`, its output going to `zbuf_`.
  bool compressing_ = false;
  std::size_t in_ = 0;           // the frame's payload bytes
  std::size_t fed_ = 0;          // of which zstd has had
  ColumnEnds column_ends_ = {};  // where the payload's columns end (0: none)
  std::size_t out_ = 0;          // compressed bytes so far, after the envelope and the note
  FramePlacement placement_;
  std::uint64_t fill_ns_ = 0;         // how long the frame took to fill
  std::uint64_t compress_ns_ = 0;     // spent compressing it so far
  std::uint64_t waits_seen_ = 0;      // backpressure waits counted when the last frame began
  std::uint32_t cpus_ = 0;            // CPUs the process may run on (0: unknown)
  std::uint64_t process_cpu_ns_ = 0;  // the process's CPU time when the last frame began
  bool no_spare_cpu_ = false;         // the process used every CPU while the frame filled
  std::uint64_t frames_ = 0;
  std::uint64_t bytes_written_ = 0;
};

extern constinit FrameCompressor g_compressor;

}  // namespace memrec::preload
