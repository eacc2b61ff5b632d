// The frame compressor (see frame_compressor.h).
#include "frame_compressor.h"

#include <sched.h>
#include <algorithm>
#include <cerrno>
// ZSTD_initStaticCCtx (compress without malloc), ZSTD_getCParams and
// ZSTD_estimateCStreamSize_usingCParams (auto's tables).
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "clock.h"
#include "dump_file.h"
#include "log.h"
#include "memrec/format/file_header.h"
#include "options.h"
#include "os.h"
#include "recorder_state.h"
#include "writer_pool.h"

namespace memrec::preload {

constinit FrameCompressor g_compressor;

namespace {

// A frame is compressed a chunk at a time, between drains: compressed whole,
// a 256 KiB frame kept the writer from the rings for longer than a fast
// thread takes to fill its own (bench churn: 1,100 waits for room, 0.2 s of a
// 0.5 s run). Each chunk ends a zstd block (ZSTD_e_flush), and so does each
// column, so that no block's entropy tables mix two columns: churn's dump
// was 2.5 % smaller with 16 KiB blocks than with 128 KiB ones, and another
// 1 % with the ends of columns as well.
constexpr std::size_t kCompressChunk = 16 << 10;
constexpr std::size_t kFrameHead = format::kFrameEnvelopeBytes + format::kEarliestBytes;

// The parameters MEMREC_ZSTD_LEVEL=auto compresses a frame with at `level`:
// the level's, with the window, hash and chain tables of a 256 KiB frame.
// zstd sizes them for the frame's pledged size: level 7 took 7.6 MB of
// tables for a frame just over 256 KiB, and cc1plus's RSS grew by 5.5 MiB.
// These take 1.6 MB; on cc1plus's and sqlite3's frames they compress within
// 0.2 % of zstd's own choice.
ZSTD_compressionParameters auto_level_params(int level, std::size_t frame_bytes = kFrameSoftLimit) {
  ZSTD_compressionParameters p = ZSTD_getCParams(level, frame_bytes, 0);
  p.windowLog = 18;
  p.hashLog = std::min(p.hashLog, 16u);
  p.chainLog = std::min(p.chainLog, 16u);
  return p;
}

// The memory a static compression context needs for any level auto may pick
// (or level 1, after backpressure) and any frame size: the largest of their
// estimates. zstd picks a level's strategy by the pledged size, and for small
// frames some levels use an optimal parser with tables of its own; a context
// too small for them would make a frame fail and stop the recording. Each is
// estimated with the window, hash and chain logs setup() sets for every
// frame, which zstd may lower for a small frame but never raises.
std::size_t auto_level_cctx_bytes() {
  const ZSTD_compressionParameters fixed = auto_level_params(AutoLevel::kTop);
  std::size_t most = 0;
  for (int level = 1; level <= AutoLevel::kTop; ++level) {
    for (const std::size_t frame_bytes :
         {std::size_t{16} << 10, std::size_t{128} << 10, std::size_t{256} << 10, kFrameSoftLimit}) {
      ZSTD_compressionParameters p = auto_level_params(level, frame_bytes);
      p.windowLog = fixed.windowLog;
      p.hashLog = fixed.hashLog;
      p.chainLog = fixed.chainLog;
      most = std::max(most, ZSTD_estimateCStreamSize_usingCParams(p));
    }
  }
  return most;
}

void zstd_failed(std::string_view message, const char* why = nullptr) {
  if (why != nullptr) {
    log_line({message, why});
  } else {
    log_line({message});
  }
  g_dump.fail("stopped writing ", EIO);
}

}  // namespace

bool FrameCompressor::setup() {
  if (payload_ == nullptr) {
    payload_ = static_cast<std::byte*>(os::map(kPayloadBytes));
    zcap_ = ZSTD_compressBound(kPayloadBytes) + kFrameHead;
    zbuf_ = static_cast<std::byte*>(os::map(zcap_));
    cctx_bytes_ = g_options.zstd_level != 0 ? ZSTD_estimateCStreamSize(g_options.zstd_level) : auto_level_cctx_bytes();
    cctx_mem_ = os::map(cctx_bytes_);
  }
  if (payload_ == nullptr || zbuf_ == nullptr || cctx_mem_ == nullptr) return false;
  // With one CPU the writer's extra work at a higher level would be the
  // program's loss (auto_level.h).
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0) {
    // Counted by hand: CPU_COUNT would import glibc's __sched_cpucount.
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) cpus_ += CPU_ISSET(cpu, &cpus) ? 1 : 0;
    if (cpus_ < 2) auto_level_ = AutoLevel(AutoLevel::kBase);
  }
  cctx_ = ZSTD_initStaticCCtx(cctx_mem_, cctx_bytes_);
  if (cctx_ == nullptr ||
      ZSTD_isError(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel,
                                          g_options.zstd_level != 0 ? g_options.zstd_level : AutoLevel::kBase)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 1))) {
    return false;
  }
  if (g_options.zstd_level == 0) {
    // Set once, kept by every level auto picks (a level sets only what was
    // not set).
    const ZSTD_compressionParameters p = auto_level_params(AutoLevel::kTop);
    if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_windowLog, static_cast<int>(p.windowLog))) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_hashLog, static_cast<int>(p.hashLog))) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_chainLog, static_cast<int>(p.chainLog)))) {
      return false;
    }
  }
  return true;
}

bool FrameCompressor::set_tables(int level) {
  const ZSTD_compressionParameters p = auto_level_params(level);
  return !ZSTD_isError(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_windowLog, static_cast<int>(p.windowLog))) &&
         !ZSTD_isError(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_hashLog, static_cast<int>(p.hashLog))) &&
         !ZSTD_isError(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_chainLog, static_cast<int>(p.chainLog)));
}

bool FrameCompressor::begin(std::size_t payload_bytes, std::uint64_t earliest_ns, std::uint64_t fill_ns,
                            FramePlacement placement) {
  placement_ = placement;
  format::encode_earliest(
      std::span<std::byte, format::kEarliestBytes>(zbuf_ + format::kFrameEnvelopeBytes, format::kEarliestBytes),
      earliest_ns);
  // A program that waited for room in its ring since the last frame began,
  // while compressing kept the writer busy (AutoLevel::busy), is held up by
  // the writer: the level drops to 1 (AutoLevel::backpressure).
  const std::uint64_t waits = counter(format::Counter::kBackpressureWaits);
  const bool waited = waits != waits_seen_ && auto_level_.busy();
  waits_seen_ = waits;
  if (waited) auto_level_.backpressure();
  // Busy CPUs while the frame filled: the process's CPU time over the fill
  // time, compared with what it may use, less half a CPU for the noise of
  // the window's ends. (A fork child's clock starts again below the parent's.)
  const std::uint64_t cpu_ns = process_cpu_ns();
  const std::uint64_t used_ns = cpu_ns > process_cpu_ns_ ? cpu_ns - process_cpu_ns_ : 0;
  process_cpu_ns_ = cpu_ns;
  no_spare_cpu_ = g_options.zstd_level == 0 && cpus_ != 0 && fill_ns != 0 && 2 * used_ns >= (2 * cpus_ - 1) * fill_ns;
  const int level = g_options.zstd_level != 0 ? g_options.zstd_level : auto_level_.level();
  if (ZSTD_isError(ZSTD_CCtx_reset(cctx_, ZSTD_reset_session_only)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, level)) ||
      ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(cctx_, payload_bytes)) ||
      (g_options.zstd_level == 0 && !set_tables(level))) {
    zstd_failed("zstd refused a new frame");
    return false;
  }
  compressing_ = true;
  fill_ns_ = fill_ns;
  compress_ns_ = 0;
  in_ = payload_bytes;
  fed_ = 0;
  out_ = 0;
  return true;
}

void FrameCompressor::write_compressed() {
  compressing_ = false;
  auto_level_.frame_done(fill_ns_, compress_ns_, no_spare_cpu_);
  const std::size_t compressed = format::kEarliestBytes + out_;
  format::encode_frame_envelope(std::span<std::byte, format::kFrameEnvelopeBytes>(zbuf_, format::kFrameEnvelopeBytes),
                                static_cast<std::uint32_t>(compressed), static_cast<std::uint32_t>(in_));
  if (placement_.needs_below != 0) await_stacks_placed(placement_.needs_below);
  if (!g_dump.append(zbuf_, compressed + format::kFrameEnvelopeBytes)) return;
  if (placement_.defines_below != 0) note_stacks_placed(placement_.defines_below);
  frames_ += 1;
  bytes_written_ += compressed + format::kFrameEnvelopeBytes;
}

void FrameCompressor::step() {
  if (!compressing_ || g_dump.failed()) return;
  std::size_t end = in_ - fed_ > kCompressChunk ? fed_ + kCompressChunk : in_;
  for (const std::size_t column_end : column_ends_) {
    if (column_end > fed_ && column_end < end) end = column_end;
  }
  ZSTD_inBuffer in{payload_, end, fed_};
  ZSTD_outBuffer out{zbuf_ + kFrameHead, zcap_ - kFrameHead, out_};
  const ZSTD_EndDirective how = end == in_ ? ZSTD_e_end : ZSTD_e_flush;
  // zbuf holds the bound of the whole frame, so one call takes the chunk.
  const std::uint64_t started = now_ns();
  const std::size_t left = ZSTD_compressStream2(cctx_, &out, &in, how);
  compress_ns_ += now_ns() - started;
  if (ZSTD_isError(left) || left != 0 || in.pos != end) {
    compressing_ = false;
    zstd_failed("zstd failed: ", ZSTD_isError(left) ? ZSTD_getErrorName(left) : "output left behind");
    return;
  }
  fed_ = end;
  out_ = out.pos;
  if (end == in_) write_compressed();
}

void FrameCompressor::finish() {
  while (compressing_ && !g_dump.failed()) step();
}

void FrameCompressor::reset_after_fork() {
  FrameCompressor parent = *this;
  *this = FrameCompressor{};
  payload_ = parent.payload_;
  zbuf_ = parent.zbuf_;
  zcap_ = parent.zcap_;
  cctx_mem_ = parent.cctx_mem_;
  cctx_bytes_ = parent.cctx_bytes_;
}

}  // namespace memrec::preload
