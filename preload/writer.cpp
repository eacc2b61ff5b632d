// The writer thread (see writer.h). One cycle: note the ring heads, write the
// stacks and modules defined so far, then drain the rings up to those heads.
// Taking the heads first guarantees that every stack an event uses is written
// before that event (FORMAT.md, "Stack").
#include "writer.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
// ZSTD_initStaticCCtx (compress without malloc), ZSTD_getCParams and
// ZSTD_estimateCStreamSize_usingCParams (auto's tables).
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "auto_level.h"
#include "clock.h"
#include "control_socket.h"
#include "decimal.h"
#include "fd_guard.h"
#include "log.h"
#include "malloc_owner.h"
#include "memrec/format/column_encoder.h"
#include "memrec/format/file_header.h"
#include "memrec/format/record_encoder.h"
#include "module_registry.h"
#include "options.h"
#include "order_stamp.h"
#include "os.h"
#include "output_file.h"
#include "recorder_state.h"
#include "stack_table.h"
#include "thread_buffer.h"
#include "thread_state.h"
#include "toggle_signal.h"

namespace memrec::preload {
namespace {

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
constexpr std::size_t kFrameSoftLimit = 512 << 10;
// A record other than Alloc and Free is encoded into a scratch buffer of this
// size before it is split into the columns.
constexpr std::size_t kRawBytes = 512 << 10;
// Each column is mapped this large, and a frame's columns together never pass
// it (ColumnEncoder checks their sum): room for the largest record past the
// soft limit.
constexpr std::size_t kColumnBytes = kFrameSoftLimit + kRawBytes + (64 << 10);
// A frame's payload: its layout byte, its directory and its columns.
constexpr std::size_t kPayloadBytes = kColumnBytes + 128;
constexpr std::size_t kCmdlineBytes = 64 << 10;
constexpr std::uint64_t kNamePollNs = 1000000000;
constexpr std::uint64_t kReleaseEvery = 256;  // events drained before freeing slots for the owner
constexpr std::uint64_t kPrefetchAhead = 8;   // events ahead whose address coding's slots are prefetched
// Events drained between two chunks of compression (compress_step); a
// multiple of kReleaseEvery.
constexpr std::uint64_t kCompressEvery = 1024;

struct Toggle {
  std::atomic<std::uint32_t> ready;
  bool on;
  format::Source source;
  std::uint64_t time_ns;
};
constexpr std::uint32_t kToggleSlots = 256;
constinit Toggle g_toggles[kToggleSlots];
std::atomic<std::uint32_t> g_toggle_next{0};

std::atomic<std::uint32_t> g_wake{0};
std::atomic<std::uint32_t> g_finish_requested{0};
std::atomic<std::uint32_t> g_finish_done{0};
std::atomic<bool> g_started{false};
// Claimed once per process by whoever starts the writer
// (writer_start_lazily) or writes the dump without one (writer_finish).
std::atomic<bool> g_launched{false};
std::atomic<std::uint32_t> g_sync_requested{0};
std::atomic<std::uint32_t> g_sync_done{0};
// launch(eager): the writer opens the dump first and reports (1 opened, 2
// failed) to launch(), which waits for it.
std::atomic<bool> g_open_eagerly{false};
std::atomic<std::uint32_t> g_open_result{0};

// Parking (writer_park, docs/design/single_threaded.md): the writer writes
// what is recorded as a frame, closes its descriptors, sets g_parked
// (release; the parker's acquire pairs) and ends; the parker joins it. The
// next writer takes the dump from g_handover_fd, a descriptor the parker
// opened in the program's table, and reports through g_open_result.
std::atomic<std::uint32_t> g_park_requested{0};
std::atomic<std::uint32_t> g_parked{0};
std::atomic<int> g_handover_fd{-1};
std::atomic<std::uint64_t> g_writer_tid{0};
pthread_t g_thread;

// An exec about to happen (writer_sync_before_exec): the thread that wins
// g_exec_claim (its acquire pairs with the release that frees it, so the
// next winner's copy follows the last one's) copies the path to
// g_exec_request and sets g_exec_requested (release; the writer's acquire
// pairs with it) before it asks for a sync; the writer serving that sync
// ends the frame with an Exec record.
constexpr std::size_t kExecPathBytes = 4096;
std::atomic<bool> g_exec_claim{false};
std::atomic<bool> g_exec_requested{false};
constinit char g_exec_request[kExecPathBytes] = {};
// An exec that returned: its errno (0: nothing to note) and when. The
// release store of the errno publishes the time; the writer's exchange pairs.
std::atomic<std::uint32_t> g_exec_error{0};
std::atomic<std::uint64_t> g_exec_error_ns{0};

// Everything the writer thread owns. Reset wholesale in a fork child.
struct Writer {
  // In the writer's own table (fd_guard.h), or guarded in the program's.
  int fd = -1;
  int statm_fd = -1;
  int stat_fd = -1;
  std::uint64_t dump_dev = 0;  // the dump's identity, to check the file reopened after a park
  std::uint64_t dump_ino = 0;
  std::uint64_t last_alone_check_ns = 0;
  bool opened = false;
  bool failed = false;
  char path[4096] = {};
  char exec_path[kExecPathBytes] = {};  // of the last Exec record, for the one noting its failure
  std::uint64_t pid = 0;
  std::uint64_t ppid = 0;
  std::uint64_t start_mono_ns = 0;
  std::uint64_t start_wall_ns = 0;
  std::byte* raw = nullptr;      // kRawBytes: where ColumnEncoder encodes a record before splitting it
  std::byte* payload = nullptr;  // kPayloadBytes
  std::byte* columns = nullptr;  // kColumnCount × kColumnBytes
  std::byte* zbuf = nullptr;
  std::size_t zcap = 0;
  // The frame being compressed, a chunk at a time (compress_step): its
  // payload is in `payload`, its output going to `zbuf`.
  bool compressing = false;
  std::size_t compress_in = 0;                            // the frame's payload bytes
  std::size_t compress_fed = 0;                           // of which zstd has had
  std::size_t column_ends[format::kColumnCount] = {};     // where the payload's columns end (0: none)
  std::size_t compress_out = 0;                           // compressed bytes so far, after the envelope and the note
  std::uint64_t frame_earliest_ns = format::kNoEarliest;  // of the frame's events so far
  std::uint64_t compress_fill_ns = 0;                     // how long the frame took to fill
  std::uint64_t compress_ns = 0;                          // spent compressing it so far
  AutoLevel auto_level;                                   // MEMREC_ZSTD_LEVEL=auto
  void* cctx_mem = nullptr;
  std::size_t cctx_bytes = 0;
  ZSTD_CCtx* cctx = nullptr;
  std::byte* cmdline = nullptr;
  std::byte* ages_mem = nullptr;  // AgeCoder::kMemoryBytes: its tables
  format::AgeCoder* ages = nullptr;
  alignas(format::AgeCoder) unsigned char ages_storage[sizeof(format::AgeCoder)] = {};
  format::ColumnEncoder* enc = nullptr;
  alignas(format::ColumnEncoder) unsigned char enc_storage[sizeof(format::ColumnEncoder)] = {};
  std::uint64_t current_tid = 0;
  std::uint32_t next_stack = 1;
  std::uint32_t toggles_read = 0;
  std::uint64_t events = 0;
  std::uint64_t frames = 0;
  std::uint64_t bytes_written = 0;
  std::uint64_t last_flush_ns = 0;
  std::uint64_t last_rss_ns = 0;
  std::uint64_t last_names_ns = 0;
  bool busy = false;               // the last cycle drained a lot: do not sleep
  bool drained = false;            // the last cycle drained anything: sleep briefly
  std::uint64_t waits_seen = 0;    // backpressure waits counted when the last frame began
  std::uint64_t most_drained = 0;  // the most events the last cycle drained from one ring
  std::uint64_t cycle_ns = 0;      // when the last cycle noted the rings' heads
  std::uint64_t cycle_gap_ns = 0;  // the time from the cycle before to it
};

constinit Writer g_w;

// ---- output -------------------------------------------------------------

// Copies the C string `from` into `to`, cut to fit with its NUL.
template <std::size_t N>
void copy_path(char (&to)[N], const char* from) {
  std::size_t n = 0;
  while (n + 1 < N && from[n] != '\0') {
    to[n] = from[n];
    ++n;
  }
  to[n] = '\0';
}

void fail(std::string_view what, int err) {
  if (g_w.failed) return;
  g_w.failed = true;
  log_line({what, g_w.path, ": ", errno_text(err), "; recording stopped, the program goes on"});
}

bool write_all(int fd, const std::byte* data, std::size_t size, std::string_view what = "cannot write ") {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(what, errno);
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Writes the header. A write past `ulimit -f` raises SIGXFSZ, whose default
// action would kill the program instead of the write failing with EFBIG. The
// writer thread, where this runs, blocks every signal; the header was once
// written from the program's thread, and this stays safe there: block SIGXFSZ
// for the write and take back the one it raised.
bool write_header(int fd, const std::byte* data, std::size_t size) {
  sigset_t xfsz;
  sigset_t old;
  sigset_t pending;
  sigemptyset(&xfsz);
  sigaddset(&xfsz, SIGXFSZ);
  pthread_sigmask(SIG_BLOCK, &xfsz, &old);
  const bool was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ) == 1;
  const bool ok = write_all(fd, data, size, "no dump: cannot write the header of ");
  if (!ok && !was_pending) {
    const timespec no_wait{0, 0};
    sigtimedwait(&xfsz, nullptr, &no_wait);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return ok;
}

std::size_t read_cmdline() {
  const int fd = guarded_open("/proc/self/cmdline", O_RDONLY, 0, /*high=*/false);
  if (fd < 0) return 0;
  std::size_t total = 0;
  for (;;) {
    const ssize_t n = read(fd, g_w.cmdline + total, kCmdlineBytes - total);
    if (n <= 0) break;
    total += static_cast<std::size_t>(n);
    if (total == kCmdlineBytes) break;
  }
  guarded_close(fd);
  // /proc ends each argument with a NUL; keep separators only between them.
  if (total > 0 && g_w.cmdline[total - 1] == std::byte{0}) --total;
  return total;
}

// Makes `g_w.path` absolute, so a chdir() of the program does not lose it.
bool make_path_absolute() {
  if (g_w.path[0] == '/') return true;
  char cwd[sizeof(g_w.path)];
  if (getcwd(cwd, sizeof(cwd)) == nullptr) return false;
  const std::size_t cwd_len = std::strlen(cwd);
  const std::size_t path_len = std::strlen(g_w.path);
  if (cwd_len + 1 + path_len + 1 > sizeof(g_w.path)) return false;
  std::memmove(g_w.path + cwd_len + 1, g_w.path, path_len + 1);
  std::memcpy(g_w.path, cwd, cwd_len);
  g_w.path[cwd_len] = '/';
  return true;
}

bool open_file() {
  if (g_w.opened) return !g_w.failed;
  g_w.opened = true;
  const int fd = create_output(g_options.output, g_w.pid, g_w.start_wall_ns / 1000000000u, g_w.path, sizeof(g_w.path));
  if (fd < 0) {
    fail("cannot create ", errno);
    return false;
  }
  make_path_absolute();  // only for messages: a failure leaves the name as it was
  g_w.fd = fd;
  struct stat st {};
  if (fstat(fd, &st) == 0) {
    g_w.dump_dev = st.st_dev;
    g_w.dump_ino = st.st_ino;
  }
  char exe[4096];
  const ssize_t exe_len = readlink("/proc/self/exe", exe, sizeof(exe));
  OptionText options;
  describe_options(options);
  const std::size_t cmdline_len = read_cmdline();
  format::FileHeaderFields h;
  h.pid = g_w.pid;
  h.ppid = g_w.ppid;
  h.start_wall_ns = g_w.start_wall_ns;
  h.start_mono_ns = g_w.start_mono_ns;
  h.page_size = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  h.exe_path = std::string_view(exe, exe_len > 0 ? static_cast<std::size_t>(exe_len) : 0);
  h.cmdline = std::span<const std::byte>(g_w.cmdline, cmdline_len);
  h.options = std::span<const format::OptionPair>(options.pairs, options.count);
  // The compression buffer is free between frames: encode the header there.
  format::ByteWriter w(std::span<std::byte>(g_w.zbuf, g_w.zcap));
  if (!format::encode_file_header(w, h)) {
    fail("cannot encode the header of ", EOVERFLOW);
    return false;
  }
  // A header cut short (a full disk, `ulimit -f`) is a file nobody can read:
  // remove it rather than leave it behind. O_EXCL made it ours.
  if (!write_header(fd, w.written().data(), w.size())) {
    unlink(g_w.path);
    guarded_close(fd);
    g_w.fd = -1;
    return false;
  }
  return true;
}

// The dump the constructor created, opened again by path for appending
// (with `high`, in the program's table); -1 if the path no longer names it
// (the directory was renamed, a mount namespace changed).
int reopen_dump(bool high) {
  const int fd = guarded_open(g_w.path, O_WRONLY | O_APPEND, 0, high);
  struct stat st {};
  if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_dev != g_w.dump_dev || st.st_ino != g_w.dump_ino)) {
    guarded_close(fd);
    errno = ENOENT;
    return -1;
  }
  return fd;
}

// Appends one frame. A dump deleted while we write would lose everything
// silently: say so and stop instead.
bool append_to_file(const std::byte* data, std::size_t size) {
  struct stat st {};
  if (fstat(g_w.fd, &st) == 0 && st.st_nlink == 0) {
    fail("the dump was deleted: ", ENOENT);
    return false;
  }
  return write_all(g_w.fd, data, size);
}

// ---- frames -------------------------------------------------------------

void put_counters() {
  using format::Counter;
  watch_toggle_signal(now_ns(), /*force=*/true);
  format::CounterValue values[] = {
      {Counter::kEvents, g_w.events},
      {Counter::kMissedReentrant, counter(Counter::kMissedReentrant)},
      {Counter::kMissedNoBuffer, counter(Counter::kMissedNoBuffer)},
      {Counter::kMissedStopped, counter(Counter::kMissedStopped)},
      {Counter::kDroppedLossy, counter(Counter::kDroppedLossy)},
      {Counter::kBackpressureWaits, counter(Counter::kBackpressureWaits)},
      {Counter::kBackpressureWaitNs, counter(Counter::kBackpressureWaitNs)},
      {Counter::kStacks, counter(Counter::kStacks)},
      {Counter::kTruncatedStacks, counter(Counter::kTruncatedStacks)},
      {Counter::kStackTableFull, counter(Counter::kStackTableFull)},
      {Counter::kBootstrapAllocs, counter(Counter::kBootstrapAllocs)},
      {Counter::kFrames, g_w.frames + 1},
      {Counter::kBytesWritten, g_w.bytes_written},
      {Counter::kThreads, counter(Counter::kThreads)},
      {Counter::kUnwindFailed, counter(Counter::kUnwindFailed)},
      {Counter::kForeignMalloc, foreign_malloc()},
      {Counter::kToggleTakenNs, toggle_taken_ns()},
      {Counter::kToggleChained, toggle_chained()},
      {Counter::kMarkersLost, counter(Counter::kMarkersLost)},
  };
  // The facts after the counts go in only once set: most dumps have none.
  std::size_t n = static_cast<std::size_t>(Counter::kUnwindFailed);
  for (std::size_t i = n; i < std::size(values); ++i) {
    if (values[i].value != 0) values[n++] = values[i];
  }
  g_w.enc->record([&](format::RecordEncoder& enc) { return enc.counters(std::span(values, n)); });
}

// A frame is compressed a chunk at a time, between drains: compressed whole,
// a 256 KiB frame kept the writer from the rings for longer than a fast
// thread takes to fill its own (bench churn: 1,100 waits for room, 0.2 s of a
// 0.5 s run). Each chunk ends a zstd block (ZSTD_e_flush), and so does each
// column, so that no block's entropy tables mix two columns: churn's dump
// was 2.5 % smaller with 16 KiB blocks than with 128 KiB ones, and another
// 1 % with the ends of columns as well.
constexpr std::size_t kCompressChunk = 16 << 10;
constexpr std::size_t kFrameHead = format::kFrameEnvelopeBytes + format::kEarliestBytes;

void write_compressed() {
  g_w.compressing = false;
  g_w.auto_level.frame_done(g_w.compress_fill_ns, g_w.compress_ns);
  const std::size_t compressed = format::kEarliestBytes + g_w.compress_out;
  format::encode_frame_envelope(std::span<std::byte, format::kFrameEnvelopeBytes>(g_w.zbuf, 12),
                                static_cast<std::uint32_t>(compressed), static_cast<std::uint32_t>(g_w.compress_in));
  if (!append_to_file(g_w.zbuf, compressed + format::kFrameEnvelopeBytes)) return;
  g_w.frames += 1;
  g_w.bytes_written += compressed + format::kFrameEnvelopeBytes;
}

// Compresses the next chunk of the frame being compressed, and writes the
// frame after its last.
void compress_step() {
  if (!g_w.compressing || g_w.failed) return;
  std::size_t end =
      g_w.compress_in - g_w.compress_fed > kCompressChunk ? g_w.compress_fed + kCompressChunk : g_w.compress_in;
  for (const std::size_t column_end : g_w.column_ends) {
    if (column_end > g_w.compress_fed && column_end < end) end = column_end;
  }
  ZSTD_inBuffer in{g_w.payload, end, g_w.compress_fed};
  ZSTD_outBuffer out{g_w.zbuf + kFrameHead, g_w.zcap - kFrameHead, g_w.compress_out};
  const ZSTD_EndDirective how = end == g_w.compress_in ? ZSTD_e_end : ZSTD_e_flush;
  // zbuf holds the bound of the whole frame, so one call takes the chunk.
  const std::uint64_t started = now_ns();
  const std::size_t left = ZSTD_compressStream2(g_w.cctx, &out, &in, how);
  g_w.compress_ns += now_ns() - started;
  if (ZSTD_isError(left) || left != 0 || in.pos != end) {
    g_w.compressing = false;
    log_line({"zstd failed: ", ZSTD_isError(left) ? ZSTD_getErrorName(left) : "output left behind"});
    fail("stopped writing ", EIO);
    return;
  }
  g_w.compress_fed = end;
  g_w.compress_out = out.pos;
  if (end == g_w.compress_in) write_compressed();
}

void finish_compressing() {
  while (g_w.compressing && !g_w.failed) compress_step();
}

// Ends the frame of the records encoded so far and starts compressing it;
// with `complete` (and always for the final frame), compresses and writes it
// before returning. `exec_path`: the process is about to exec it; the frame,
// even an empty one, ends with an Exec record and is written before returning.
void flush_frame(bool final_frame, bool complete = false, const char* exec_path = nullptr) {
  const std::uint64_t now = now_ns();
  if (g_w.failed) return;
  // The frame before first: frames stay in order, and payload and zbuf are free again.
  finish_compressing();
  if (g_w.failed) return;
  if (g_w.enc->size() == 0 && !final_frame && exec_path == nullptr) {
    g_w.last_flush_ns = now;
    return;
  }
  // Before compressing: a lazily opened file writes its header through zbuf.
  if (!open_file()) return;
  put_counters();
  // At or after every stamp handed out, which may run ahead of the clock (order_stamp.h).
  if (final_frame) {
    const std::uint64_t end_ns = publish_tick();
    g_w.enc->record([&](format::RecordEncoder& enc) { return enc.end(end_ns); });
  } else if (exec_path != nullptr) {
    const std::uint64_t exec_ns = publish_tick();
    g_w.enc->record([&](format::RecordEncoder& enc) { return enc.exec(exec_ns, 0, exec_path); });
    complete = true;
  }
  g_w.compress_fill_ns = now - g_w.last_flush_ns;
  g_w.last_flush_ns = now;
  const std::size_t payload_bytes = g_w.enc->finish(std::span<std::byte>(g_w.payload, kPayloadBytes), g_w.column_ends);
  format::encode_earliest(
      std::span<std::byte, format::kEarliestBytes>(g_w.zbuf + format::kFrameEnvelopeBytes, format::kEarliestBytes),
      g_w.frame_earliest_ns);
  g_w.enc->begin_frame();
  g_w.current_tid = 0;
  g_w.frame_earliest_ns = format::kNoEarliest;
  if (payload_bytes == 0) {
    // Cannot happen: the payload buffer holds the largest frame's columns.
    fail("a frame's columns do not fit while writing ", E2BIG);
    return;
  }
  // A program that waited for room in its ring since the last frame began,
  // while compressing kept the writer busy (AutoLevel::busy), is held up by
  // the writer: the level drops to 1 (AutoLevel::backpressure).
  const std::uint64_t waits = counter(format::Counter::kBackpressureWaits);
  const bool waited = waits != g_w.waits_seen && g_w.auto_level.busy();
  g_w.waits_seen = waits;
  if (waited) g_w.auto_level.backpressure();
  const int level = g_options.zstd_level != 0 ? g_options.zstd_level : g_w.auto_level.level();
  if (ZSTD_isError(ZSTD_CCtx_reset(g_w.cctx, ZSTD_reset_session_only)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(g_w.cctx, ZSTD_c_compressionLevel, level)) ||
      ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(g_w.cctx, payload_bytes))) {
    log_line({"zstd refused a new frame"});
    fail("stopped writing ", EIO);
    return;
  }
  g_w.compressing = true;
  g_w.compress_ns = 0;
  g_w.compress_in = payload_bytes;
  g_w.compress_fed = 0;
  g_w.compress_out = 0;
  if (final_frame || complete) finish_compressing();
}

// Encodes one record, starting a new frame if this one is full.
template <typename Fn>
void put(Fn&& encode) {
  if (!encode(*g_w.enc)) {
    flush_frame(false);
    if (!encode(*g_w.enc)) fail("a record does not fit in a frame of ", E2BIG);
  }
  if (g_w.enc->holds_at_least(kFrameSoftLimit)) flush_frame(false);
}

// put() of a record that RecordEncoder writes (all but Alloc and Free).
template <typename Fn>
void put_record(Fn&& encode) {
  put([&](format::ColumnEncoder& enc) { return enc.record(encode); });
}

// An Alloc or Free of the thread the frame's last Thread record names, coded
// with no generic put(): nearly every event drained is one, and the dispatch
// cost the writer as many instructions as coding the event (callgrind). False
// when the event needs put_event()'s way: another kind or thread, or a full frame.
[[gnu::always_inline]] inline bool put_plain_event(std::uint64_t tid, const RawEvent& e) {
  if (g_w.current_tid != tid) return false;
  format::ColumnEncoder& enc = *g_w.enc;
  bool written;
  if (e.kind == EventKind::kAlloc) {
    written = enc.alloc(static_cast<format::AllocFn>(e.fn), e.time_ns, e.addr, e.size, e.stack);
  } else if (e.kind == EventKind::kFree) {
    written = enc.free(e.time_ns, e.addr);
  } else {
    return false;
  }
  if (!written) return false;  // nothing was written: put_event() flushes and writes it again
  g_w.frame_earliest_ns = std::min(g_w.frame_earliest_ns, e.time_ns);
  if (enc.holds_at_least(kFrameSoftLimit)) flush_frame(false);
  g_w.events += 1;
  return true;
}

// `t`: the event's second slot, for the kinds that take one (slots_of).
void put_event(std::uint64_t tid, const RawEvent& e, const RawTail& t) {
  using format::AllocFn;
  // The Thread record and the event go into the same frame: if either does
  // not fit, the frame is flushed (forgetting the thread) and both are
  // written again into the next one.
  put([&](format::ColumnEncoder& enc) {
    if (g_w.current_tid != tid) {
      if (!enc.record([&](format::RecordEncoder& r) { return r.thread(tid); })) return false;
      g_w.current_tid = tid;
    }
    bool written = false;
    switch (e.kind) {
      case EventKind::kAlloc:
        written = enc.alloc(static_cast<AllocFn>(e.fn), e.time_ns, e.addr, e.size, e.stack);
        break;
      case EventKind::kFree:
        written = enc.free(e.time_ns, e.addr);
        break;
      case EventKind::kRealloc:
        written = enc.record([&](format::RecordEncoder& r) {
          return r.realloc(static_cast<AllocFn>(e.fn), e.time_ns, t.old_addr, t.alloc_ns, e.addr, e.size, e.stack);
        });
        break;
      case EventKind::kMmap:
        written = enc.record([&](format::RecordEncoder& r) {
          return r.mmap(e.time_ns, e.addr, e.size, static_cast<std::uint32_t>(t.old_size >> 32),
                        static_cast<std::uint32_t>(t.old_size), e.stack);
        });
        break;
      case EventKind::kMunmap:
        written = enc.record([&](format::RecordEncoder& r) { return r.munmap(e.time_ns, e.addr, e.size); });
        break;
      case EventKind::kMremap:
        written = enc.record([&](format::RecordEncoder& r) {
          return r.mremap(e.time_ns, t.old_addr, t.old_size, t.alloc_ns, e.addr, e.size, e.stack);
        });
        break;
      default:
        return true;
    }
    // Here, not after put(): put() may flush the frame that holds this event.
    // A Realloc's or Mremap's release comes first, at time_ns.
    if (written) g_w.frame_earliest_ns = std::min(g_w.frame_earliest_ns, e.time_ns);
    return written;
  });
  g_w.events += 1;
}

std::string_view event_name(const RawEvent& e, char (&storage)[17]) {
  std::memcpy(storage, &e.addr, 16);
  storage[16] = '\0';
  return std::string_view(storage, strnlen(storage, 16));
}

void put_thread_event(ThreadBuffer& b, const RawEvent& e) {
  char name_storage[17];
  const std::string_view name = event_name(e, name_storage);
  if (e.kind == EventKind::kThreadStart) {
    put_record([&](format::RecordEncoder& enc) { return enc.thread_start(b.tid, e.time_ns, name); });
  } else {
    if (!b.name_known || name != std::string_view(b.last_name, strnlen(b.last_name, 16))) {
      put_record([&](format::RecordEncoder& enc) { return enc.thread_name(b.tid, name); });
    }
    put_record([&](format::RecordEncoder& enc) { return enc.thread_exit(b.tid, e.time_ns); });
  }
  std::memcpy(b.last_name, name_storage, 16);
  b.name_known = true;
  g_w.current_tid = 0;
}

// A memrec_mark() call: its label is in the slots after the event's.
void put_marker_event(const ThreadBuffer& b, const RawEvent& e, std::uint64_t at, std::uint64_t mask) {
  char label[label_slots(format::kMaxMarkerLabelBytes) * sizeof(RingSlot)];
  const std::size_t bytes = e.size < format::kMaxMarkerLabelBytes ? e.size : format::kMaxMarkerLabelBytes;
  for (std::uint64_t i = 1; i <= label_slots(bytes); ++i) {
    std::memcpy(label + (i - 1) * sizeof(RingSlot), &b.slots[(at + i) & mask], sizeof(RingSlot));
  }
  const auto source = static_cast<format::Source>(e.fn);
  // Not in the frame's note, which is of heap and mapping events only (FORMAT.md "Frames").
  put_record([&](format::RecordEncoder& enc) { return enc.marker(e.time_ns, source, std::string_view(label, bytes)); });
}

// ---- one cycle ----------------------------------------------------------

void write_modules() {
  const std::uint32_t n = module_count();
  for (std::uint32_t i = 0; i < n; ++i) {
    Module& m = module_at(i);
    if (!m.load_written) {
      put_record([&](format::RecordEncoder& enc) {
        return enc.module_load(m.id, m.load_gen, std::string_view(m.path, m.path_size), m.bias,
                               std::as_bytes(std::span(m.build_id, m.build_id_size)),
                               std::span<const format::Segment>(m.segments, m.segment_count));
      });
      m.load_written = true;
    }
    const std::uint64_t unload = m.unload_gen.load(std::memory_order_acquire);
    if (unload != 0 && !m.unload_written) {
      put_record([&](format::RecordEncoder& enc) { return enc.module_unload(m.id, unload); });
      m.unload_written = true;
    }
  }
}

void write_stacks() {
  const std::uint32_t end = stack_id_end();
  for (; g_w.next_stack < end; ++g_w.next_stack) {
    const StackView v = stack_view(g_w.next_stack);
    if (v.valid) {
      const std::uint8_t flags = v.truncated ? format::kStackTruncated : 0;
      put([&](format::ColumnEncoder& enc) { return enc.stack(g_w.next_stack, v.module_gen, flags, v.ips); });
    }
    // The record holds a copy of the frames now.
    stack_written(g_w.next_stack);
  }
}

void write_toggles() {
  for (;;) {
    Toggle& t = g_toggles[g_w.toggles_read % kToggleSlots];
    // Pairs with the release store in note_recording_toggle().
    if (t.ready.load(std::memory_order_acquire) != g_w.toggles_read / kToggleSlots + 1) return;
    put_record([&](format::RecordEncoder& enc) { return enc.recording(t.time_ns, t.on, t.source); });
    ++g_w.toggles_read;
  }
}

// An exec announced by an Exec record returned: note its errno, and the
// recording goes on (FORMAT.md, "Exec").
void write_exec_failure() {
  const std::uint32_t error = g_exec_error.exchange(0, std::memory_order_acquire);
  if (error == 0) return;
  const std::uint64_t time_ns = g_exec_error_ns.load(std::memory_order_relaxed);
  put_record([&](format::RecordEncoder& enc) { return enc.exec(time_ns, error, g_w.exec_path); });
}

void drain(ThreadBuffer& b, std::uint64_t end) {
  // After the acquire load of `head` that gave `end`: the size the slots up
  // to `end` were written with (thread_buffer.h).
  const std::uint64_t mask = b.mask.load(std::memory_order_relaxed);
  std::uint64_t tail = b.tail.load(std::memory_order_relaxed);
  const std::uint64_t start = tail;
  std::uint64_t drained = 0;
  while (tail < end && !g_w.failed) {
    // A slot ahead may be a second slot: its `addr` is then another field,
    // and the prefetch merely useless.
    if (end - tail > kPrefetchAhead) g_w.enc->prefetch(b.slots[(tail + kPrefetchAhead) & mask].event.addr);
    const RawEvent& e = b.slots[tail & mask].event;
    if (!put_plain_event(b.tid, e)) {
      if (e.kind == EventKind::kThreadStart || e.kind == EventKind::kThreadExit) {
        put_thread_event(b, e);
      } else if (e.kind == EventKind::kMarker) {
        put_marker_event(b, e, tail, mask);
      } else {
        put_event(b.tid, e, b.slots[(tail + 1) & mask].tail);
      }
    }
    // The owner commits an event's slots together, so `end` never splits one.
    tail += slots_of(e);
    // Release pairs with the owner's acquire load in reserve(): the slot was
    // read before it is handed back.
    if (++drained % kReleaseEvery == 0) {
      b.tail.store(tail, std::memory_order_release);
      if (drained % kCompressEvery == 0) compress_step();
    }
  }
  b.tail.store(end, std::memory_order_release);
  if (end - start >= (mask + 1) / 4) g_w.busy = true;
  if (end != start) g_w.drained = true;
  if (end - start > g_w.most_drained) g_w.most_drained = end - start;
}

void sample_rss(std::uint64_t now) {
  if (g_options.rss_interval_ms == 0 || now - g_w.last_rss_ns < g_options.rss_interval_ms * 1000000ull) return;
  g_w.last_rss_ns = now;
  if (g_w.statm_fd < 0) g_w.statm_fd = guarded_open("/proc/self/statm", O_RDONLY, 0, /*high=*/true);
  char buf[128];
  const ssize_t n = g_w.statm_fd >= 0 ? pread(g_w.statm_fd, buf, sizeof(buf) - 1, 0) : -1;
  if (n <= 0) return;
  buf[n] = '\0';
  // statm: size resident shared text lib data dt, in pages.
  const char* p = buf;
  while (*p != ' ' && *p != '\0') ++p;
  std::uint64_t pages = 0;
  for (++p; *p >= '0' && *p <= '9'; ++p) pages = pages * 10 + static_cast<std::uint64_t>(*p - '0');
  const std::uint64_t rss = pages * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  put_record([&](format::RecordEncoder& enc) { return enc.rss(now, rss); });
}

// Threads rename themselves after they start; look at /proc once a second.
void poll_names(ThreadBuffer& b) {
  if (b.exited.load(std::memory_order_relaxed) || !b.name_known) return;
  char path[64] = "/proc/self/task/";
  std::size_t pos = std::strlen(path);
  pos += format_decimal(path + pos, 24, b.tid);
  std::memcpy(path + pos, "/comm", 6);
  const int fd = guarded_open(path, O_RDONLY, 0, /*high=*/false);
  if (fd < 0) return;
  char name[17] = {};
  const ssize_t got = read(fd, name, 16);
  guarded_close(fd);
  if (got <= 0) return;
  std::size_t len = static_cast<std::size_t>(got);
  if (name[len - 1] == '\n') --len;
  const std::string_view now_name(name, len);
  if (now_name == std::string_view(b.last_name, strnlen(b.last_name, 16))) return;
  put_record([&](format::RecordEncoder& enc) { return enc.thread_name(b.tid, now_name); });
  std::memset(b.last_name, 0, sizeof(b.last_name));
  std::memcpy(b.last_name, name, len);
}

bool thread_gone(const ThreadBuffer& b) {
  return syscall(SYS_tgkill, static_cast<long>(g_w.pid), static_cast<long>(b.tid), 0) == -1 && errno == ESRCH;
}

// Unlinks and unmaps buffers of threads the kernel no longer knows, once empty.
void retire_threads() {
  ThreadBuffer* prev = nullptr;
  ThreadBuffer* b = g_buffers.load(std::memory_order_acquire);
  while (b != nullptr) {
    ThreadBuffer* next = b->next.load(std::memory_order_relaxed);
    const bool done = b->exited.load(std::memory_order_acquire) && thread_gone(*b);
    if (done) {
      drain(*b, b->head.load(std::memory_order_acquire));
      bool unlinked = true;
      if (prev != nullptr) {
        prev->next.store(next, std::memory_order_relaxed);
      } else {
        ThreadBuffer* expected = b;
        // A new thread may have pushed itself in front meanwhile: try next cycle.
        unlinked = g_buffers.compare_exchange_strong(expected, next, std::memory_order_acq_rel);
      }
      if (unlinked) {
        retire_buffer(b);
        b = next;
        continue;
      }
    }
    prev = b;
    b = next;
  }
}

void cycle() {
  // Pairs with order_stamp()'s acquire: see order_stamp.h.
  publish_tick();
  write_modules();
  const std::uint64_t noted = now_ns();
  g_w.cycle_gap_ns = noted - g_w.cycle_ns;
  g_w.cycle_ns = noted;
  for (ThreadBuffer* b = g_buffers.load(std::memory_order_acquire); b != nullptr;
       b = b->next.load(std::memory_order_acquire)) {
    // Pairs with commit()'s release store: events up to here are complete.
    b->drain_to = b->head.load(std::memory_order_acquire);
  }
  write_stacks();
  write_toggles();
  write_exec_failure();
  const std::uint64_t now = now_ns();
  watch_toggle_signal(now);
  const bool poll = now - g_w.last_names_ns >= kNamePollNs;
  if (poll) g_w.last_names_ns = now;
  g_w.busy = false;
  g_w.drained = false;
  g_w.most_drained = 0;
  for (ThreadBuffer* b = g_buffers.load(std::memory_order_acquire); b != nullptr;
       b = b->next.load(std::memory_order_acquire)) {
    drain(*b, b->drain_to);
    if (poll) poll_names(*b);
  }
  sample_rss(now);
  retire_threads();
  compress_step();
  // `now` was read before the drains, which may have ended a full frame
  // since: a frame flushed after it is not overdue. (Without this check the
  // difference wrapped, and every full frame was followed by a frame of the
  // few events drained after it: sqlite3's dump had 55 frames instead of 28.)
  if (g_w.enc->size() > 0 && now > g_w.last_flush_ns &&
      now - g_w.last_flush_ns >= g_options.flush_interval_ms * 1000000ull) {
    flush_frame(false);
  }
}

// glibc ends the process with exit(0) when its last thread exits, e.g. after
// main() called pthread_exit(). Our writer thread keeps that from happening,
// so when it is the only thread left it does what glibc would have done.
bool only_writer_left(std::uint64_t now) {
  constexpr std::uint64_t kCheckEveryNs = 50'000'000;
  if (now - g_w.last_alone_check_ns < kCheckEveryNs) return false;
  g_w.last_alone_check_ns = now;
  if (g_w.stat_fd < 0) g_w.stat_fd = guarded_open("/proc/self/stat", O_RDONLY, 0, /*high=*/true);
  char buf[1024];
  const ssize_t n = g_w.stat_fd >= 0 ? pread(g_w.stat_fd, buf, sizeof(buf) - 1, 0) : -1;
  if (n <= 0) return false;
  buf[n] = '\0';
  // The command name may hold spaces and parentheses: fields start after the
  // last ')': state first, num_threads 18th (proc(5), fields 3 and 20). A
  // main thread that left with pthread_exit() is a zombie still counted.
  const char* p = std::strrchr(buf, ')');
  if (p == nullptr || p[1] != ' ') return false;
  const char state = p[2];
  for (int field = 0; field < 18; ++field) {
    while (*p != '\0' && *p != ' ') ++p;
    while (*p == ' ') ++p;
  }
  const long threads = std::strtol(p, nullptr, 10);
  return threads == 1 || (threads == 2 && state == 'Z');
}

void finish() {
  control_close();
  cycle();
  // New events stop here; a second cycle takes what was committed meanwhile.
  g_state.store(RecorderState::kFinished, std::memory_order_relaxed);
  cycle();
  flush_frame(true);
  guarded_close(g_w.fd);
  guarded_close(g_w.statm_fd);
  guarded_close(g_w.stat_fd);
  g_w.fd = g_w.statm_fd = g_w.stat_fd = -1;
}

std::uint64_t sleep_ns(std::uint64_t now) {
  if (g_w.busy || g_w.compressing) return 0;
  // While events flow, wake again by the time the fastest ring is a quarter
  // full at the rate it filled since the cycle before: the next cycle then
  // finds it busy and stays awake. A thread that allocates fast fills its ring
  // in a quarter of a millisecond, and a writer that slept longer made it
  // wait for room (bench churn: 1,128 waits, 0.2 s of its 0.52). While the
  // program is quiet, look rarely.
  std::uint64_t wait = 5000000;
  if (g_w.drained) {
    const std::uint64_t per_event = g_w.cycle_gap_ns / (g_w.most_drained != 0 ? g_w.most_drained : 1);
    wait = per_event * (ThreadBuffer::kSlots / 4);
    if (wait > 300000) wait = 300000;
  }
  const std::uint64_t flush_at = g_w.last_flush_ns + g_options.flush_interval_ms * 1000000ull;
  if (flush_at > now && flush_at - now < wait) wait = flush_at - now;
  return wait < 20000 ? 20000 : wait;
}

// The writer leaves for good (finished, or failed): nobody joins it.
void* end_unjoined() {
  pthread_detach(pthread_self());
  return nullptr;
}

// Everything recorded goes to the file before the thread ends; its
// descriptors die with its table, so forget them (the next writer reopens
// what it needs).
void park() {
  control_close();
  g_ticking.store(false, std::memory_order_release);
  cycle();
  flush_frame(false, /*complete=*/true);
  guarded_close(g_w.fd);
  guarded_close(g_w.statm_fd);
  guarded_close(g_w.stat_fd);
  g_w.fd = g_w.statm_fd = g_w.stat_fd = -1;
  g_parked.store(1, std::memory_order_release);
  os::futex_wake_all(g_parked);
}

void* writer_main(void*) {
  t_thread.depth = HookDepth::kInternal;  // for life: nothing this thread does is recorded
  sigset_t all;
  sigfillset(&all);
  // Signals go to the program's threads; SIGXFSZ from our writes turns into EFBIG.
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  prctl(PR_SET_NAME, "memrec-writer", 0, 0, 0);
  // Its sleeps are tens of microseconds (sleep_ns): the default 50 us of
  // timer slack would double them.
  prctl(PR_SET_TIMERSLACK, 5000, 0, 0, 0);
  // Every descriptor the recorder keeps (the dump, statm, stat) and those it
  // opens for a moment (cmdline, threads' comm) live in this thread's own
  // table: in the program's, even a moment on its lowest free number races
  // with its threads' dup2() onto that number (docs/design/descriptors.md).
  // Hence the dump is opened here, not by launch() on the program's thread.
  use_private_descriptors();
  g_writer_tid.store(os::gettid(), std::memory_order_relaxed);
  if (const int handover = g_handover_fd.load(std::memory_order_acquire); handover >= 0) {
    // After a park: the dump, from the program's table into ours.
    if (has_private_descriptors()) {
      g_w.fd = borrow_program_fd(handover, O_WRONLY | O_APPEND);
    } else {
      g_w.fd = g_handover_fd.exchange(-1);  // adopted: guarded in the program's table like the rest
    }
    if (g_w.fd < 0) fail("cannot take back the dump after a namespace change: ", errno);
    g_open_result.store(g_w.fd >= 0 ? 1 : 2, std::memory_order_release);
    os::futex_wake_all(g_open_result);
  } else if (g_w.opened && g_w.fd < 0) {
    // The constructor wrote the header and closed it: ours from here on.
    g_w.fd = reopen_dump(/*high=*/false);
    if (g_w.fd < 0) fail("cannot reopen the dump ", errno);
    g_open_result.store(g_w.fd >= 0 ? 1 : 2, std::memory_order_release);
    os::futex_wake_all(g_open_result);
    if (g_w.fd < 0) return end_unjoined();
  } else if (g_open_eagerly.load(std::memory_order_acquire)) {
    const bool opened = open_file();
    g_open_result.store(opened ? 1 : 2, std::memory_order_release);
    os::futex_wake_all(g_open_result);
    if (!opened) return end_unjoined();
  }
  control_listen(g_w.pid);
  publish_tick();
  // Release pairs with order_stamp()'s acquire: a lone thread takes ticks from now on.
  g_ticking.store(true, std::memory_order_release);
  for (;;) {
    const std::uint32_t seq = g_wake.load(std::memory_order_acquire);
    cycle();
    if (g_w.failed) {
      g_state.store(RecorderState::kStopped, std::memory_order_relaxed);
      guarded_close(g_w.fd);
      g_w.fd = -1;
    }
    if (const std::uint32_t sync = g_sync_requested.load(std::memory_order_acquire); sync != g_sync_done.load()) {
      // Read before the cycle above? No: a request that arrived during it may
      // miss events committed before it, so run one more cycle first.
      cycle();
      const char* exec_path = nullptr;
      if (g_exec_requested.load(std::memory_order_acquire)) {
        copy_path(g_w.exec_path, g_exec_request);
        exec_path = g_w.exec_path;
      }
      flush_frame(false, /*complete=*/true, exec_path);
      g_sync_done.store(sync, std::memory_order_release);
      os::futex_wake_all(g_sync_done);
    }
    if (g_finish_requested.load(std::memory_order_acquire) != 0 || g_w.failed) {
      if (!g_w.failed) finish();
      g_finish_done.store(1, std::memory_order_release);
      os::futex_wake_all(g_finish_done);
      return end_unjoined();
    }
    if (g_park_requested.load(std::memory_order_acquire) != 0) {
      park();
      return nullptr;  // joined by writer_park()
    }
    if (only_writer_left(now_ns())) {
      finish();
      g_finish_done.store(1, std::memory_order_release);
      os::futex_wake_all(g_finish_done);
      // Atexit handlers and destructors run now, as after the last thread's
      // exit; our own destructor finds the dump finished.
      exit(0);
    }
    control_serve(now_ns());
    const std::uint64_t wait = sleep_ns(now_ns());
    if (wait == 0) {
      sched_yield();
    } else {
      os::futex_wait(g_wake, seq, wait);
    }
  }
}

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
// estimated with the window, hash and chain logs setup_buffers() sets for
// every frame, which zstd may lower for a small frame but never raises.
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

bool setup_buffers() {
  if (g_w.raw == nullptr) {
    g_w.raw = static_cast<std::byte*>(os::map(kRawBytes));
    g_w.payload = static_cast<std::byte*>(os::map(kPayloadBytes));
    g_w.columns = static_cast<std::byte*>(os::map(format::kColumnCount * kColumnBytes));
    g_w.zcap = ZSTD_compressBound(kPayloadBytes) + format::kFrameEnvelopeBytes + format::kEarliestBytes;
    g_w.zbuf = static_cast<std::byte*>(os::map(g_w.zcap));
    g_w.cmdline = static_cast<std::byte*>(os::map(kCmdlineBytes));
    g_w.ages_mem = static_cast<std::byte*>(os::map(format::AgeCoder::kMemoryBytes));
    g_w.cctx_bytes =
        g_options.zstd_level != 0 ? ZSTD_estimateCStreamSize(g_options.zstd_level) : auto_level_cctx_bytes();
    g_w.cctx_mem = os::map(g_w.cctx_bytes);
  }
  if (g_w.raw == nullptr || g_w.payload == nullptr || g_w.columns == nullptr || g_w.zbuf == nullptr ||
      g_w.cmdline == nullptr || g_w.ages_mem == nullptr || g_w.cctx_mem == nullptr) {
    return false;
  }
  // With one CPU the writer's extra work at a higher level would be the
  // program's loss (auto_level.h).
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0) {
    int count = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && count < 2; ++cpu) count += CPU_ISSET(cpu, &cpus) ? 1 : 0;
    if (count < 2) g_w.auto_level = AutoLevel(AutoLevel::kBase);
  }
  g_w.cctx = ZSTD_initStaticCCtx(g_w.cctx_mem, g_w.cctx_bytes);
  if (g_w.cctx == nullptr ||
      ZSTD_isError(ZSTD_CCtx_setParameter(g_w.cctx, ZSTD_c_compressionLevel,
                                          g_options.zstd_level != 0 ? g_options.zstd_level : AutoLevel::kBase)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(g_w.cctx, ZSTD_c_checksumFlag, 1))) {
    return false;
  }
  if (g_options.zstd_level == 0) {
    // Set once, kept by every level auto picks (a level sets only what was
    // not set).
    const ZSTD_compressionParameters p = auto_level_params(AutoLevel::kTop);
    if (ZSTD_isError(ZSTD_CCtx_setParameter(g_w.cctx, ZSTD_c_windowLog, static_cast<int>(p.windowLog))) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(g_w.cctx, ZSTD_c_hashLog, static_cast<int>(p.hashLog))) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(g_w.cctx, ZSTD_c_chainLog, static_cast<int>(p.chainLog)))) {
      return false;
    }
  }
  const std::size_t cap = kColumnBytes;
  format::ColumnBuffers columns;
  for (std::size_t i = 0; i < format::kColumnCount; ++i) columns[i] = std::span<std::byte>(g_w.columns + i * cap, cap);
  g_w.ages =
      new (g_w.ages_storage) format::AgeCoder(std::span<std::byte>(g_w.ages_mem, format::AgeCoder::kMemoryBytes));
  g_w.enc = new (g_w.enc_storage) format::ColumnEncoder(columns, std::span<std::byte>(g_w.raw, kRawBytes), *g_w.ages);
  return true;
}

// Starts the writer thread; with `eager` or a handover, waits until it has
// its dump. Joinable: writer_park() joins it, and it detaches itself when it
// ends otherwise.
bool start_thread(bool eager) {
  g_open_eagerly.store(eager, std::memory_order_relaxed);
  g_open_result.store(0, std::memory_order_relaxed);
  const bool wait = eager || g_handover_fd.load(std::memory_order_relaxed) >= 0;
  const int err = pthread_create(&g_thread, nullptr, writer_main, nullptr);
  if (err != 0) {
    log_line({"cannot start the writer thread: ", errno_text(err), "; recording stopped, the program goes on"});
    return false;
  }
  if (wait) {
    std::uint32_t result;
    while ((result = g_open_result.load(std::memory_order_acquire)) == 0) os::futex_wait(g_open_result, 0, 0);
    if (result != 1) return false;
  }
  g_started.store(true, std::memory_order_release);
  return true;
}

// Everything launch() does but start the thread.
bool prepare_launch() {
  // The recording started at the first hook (early_init's tick), before our
  // constructor ran: events from then on must not precede the start.
  const std::uint64_t mono = now_ns();
  const std::uint64_t wall = wall_ns();
  const std::uint64_t tick = g_tick_ns.load(std::memory_order_acquire);
  g_w.start_mono_ns = tick != 0 && tick < mono ? tick : mono;
  g_w.start_wall_ns = wall - (mono - g_w.start_mono_ns);
  g_w.last_flush_ns = g_w.start_mono_ns;
  g_w.last_names_ns = g_w.start_mono_ns;
  if (!setup_buffers()) {
    log_line({"cannot set up the writer's buffers; recording stopped, the program goes on"});
    return false;
  }
  return true;
}

// A process that ends before anything started its writer: this thread
// writes the dump itself (it may be in a signal handler, where starting a
// thread could wait for a malloc lock the interrupted code holds).
void finish_without_writer() {
  HookScope scope(HookDepth::kInternal);
  if (g_w.opened && g_w.fd < 0) {
    g_w.fd = reopen_dump(/*high=*/true);
    if (g_w.fd < 0) {
      fail("cannot reopen the dump ", errno);
      return;
    }
  }
  finish();
  g_finish_done.store(1, std::memory_order_release);
}

}  // namespace

bool writer_prepare() {
  HookScope scope(HookDepth::kInternal);
  g_w.pid = static_cast<std::uint64_t>(getpid());
  g_w.ppid = static_cast<std::uint64_t>(getppid());
  if (g_options.start_disabled) note_recording_toggle(false, now_ns(), format::Source::kStart);
  if (!prepare_launch()) return false;
  // The dump exists from the start, with its header, even if the writer
  // never starts (a process killed first shows as cut short, not missing),
  // and a directory nobody may write is reported now. Program start: no
  // other thread of the program can be using descriptor numbers yet.
  if (!open_file()) return false;
  guarded_close(g_w.fd);
  g_w.fd = -1;
  return true;
}

bool writer_launched() { return g_launched.load(std::memory_order_acquire); }

void writer_start_lazily() {
  if (g_launched.load(std::memory_order_acquire) ||
      g_state.load(std::memory_order_relaxed) != RecorderState::kRecording ||
      g_launched.exchange(true, std::memory_order_acq_rel)) {
    return;
  }
  HookScope scope(HookDepth::kInternal);
  if (!start_thread(/*eager=*/true)) g_state.store(RecorderState::kStopped);
}

void wake_writer() {
  g_wake.fetch_add(1, std::memory_order_release);
  os::futex_wake_all(g_wake);
}

void writer_finish(std::uint64_t timeout_ns) {
  if (!g_launched.load(std::memory_order_acquire) && !g_launched.exchange(true, std::memory_order_acq_rel)) {
    finish_without_writer();
    return;
  }
  if (!g_started.load(std::memory_order_acquire)) return;
  g_finish_requested.store(1, std::memory_order_release);
  wake_writer();
  const std::uint64_t deadline = now_ns() + timeout_ns;
  while (g_finish_done.load(std::memory_order_acquire) == 0) {
    const std::uint64_t now = now_ns();
    if (now >= deadline) return;
    os::futex_wait(g_finish_done, 0, deadline - now);
  }
}

void writer_sync_before_exec(const char* path, std::uint64_t timeout_ns) {
  writer_start_lazily();  // the Exec record ends the dump: it needs a writer
  // Two threads exec'ing at once: the second syncs without an Exec record
  // (at most one exec replaces the image; the kernel ends the other thread).
  if (path == nullptr || g_exec_claim.exchange(true, std::memory_order_acquire)) return writer_sync(timeout_ns);
  copy_path(g_exec_request, path);
  g_exec_requested.store(true, std::memory_order_release);
  writer_sync(timeout_ns);
  g_exec_requested.store(false, std::memory_order_relaxed);
  g_exec_claim.store(false, std::memory_order_release);
}

void writer_note_exec_failed(int error, std::uint64_t time_ns) {
  if (!g_started.load(std::memory_order_acquire)) return;
  g_exec_error_ns.store(time_ns, std::memory_order_relaxed);
  g_exec_error.store(error > 0 ? static_cast<std::uint32_t>(error) : EIO, std::memory_order_release);
}

void writer_sync(std::uint64_t timeout_ns) {
  if (!g_started.load(std::memory_order_acquire) || g_finish_done.load() != 0) return;
  const std::uint32_t ticket = g_sync_requested.fetch_add(1, std::memory_order_acq_rel) + 1;
  wake_writer();
  const std::uint64_t deadline = now_ns() + timeout_ns;
  for (;;) {
    const std::uint32_t done = g_sync_done.load(std::memory_order_acquire);
    if (static_cast<std::int32_t>(done - ticket) >= 0 || g_finish_done.load() != 0) return;
    const std::uint64_t now = now_ns();
    if (now >= deadline) return;
    os::futex_wait(g_sync_done, done, deadline - now);
  }
}

std::uint64_t recorded_pid() { return g_w.pid; }

bool writer_park(std::uint64_t timeout_ns) {
  HookScope scope(HookDepth::kInternal);
  if (!g_started.load(std::memory_order_acquire) || g_finish_done.load(std::memory_order_acquire) != 0) return false;
  g_park_requested.store(1, std::memory_order_release);
  wake_writer();
  const std::uint64_t deadline = now_ns() + timeout_ns;
  while (g_parked.load(std::memory_order_acquire) == 0 && g_finish_done.load(std::memory_order_acquire) == 0) {
    const std::uint64_t now = now_ns();
    if (now >= deadline) return false;  // the writer stays; the program's call fails as it did without parking
    os::futex_wait(g_parked, 0, deadline - now > 1000000 ? 1000000 : deadline - now);
  }
  g_park_requested.store(0, std::memory_order_relaxed);
  if (g_parked.load(std::memory_order_acquire) == 0) return false;  // it finished or failed instead
  g_parked.store(0, std::memory_order_relaxed);
  g_started.store(false, std::memory_order_release);
  pthread_join(g_thread, nullptr);
  // pthread_join returns once the kernel cleared the thread's tid, which it
  // does before it unhashes the task (kernel/exit.c: exit_mm, then
  // exit_notify): until then /proc/self/task still lists it, and a program
  // that counts its threads there (Chromium's zygote) would see two.
  const auto tid = static_cast<long>(g_writer_tid.load(std::memory_order_relaxed));
  for (int i = 0; i < 100000 && syscall(SYS_tgkill, static_cast<long>(getpid()), tid, 0) == 0; ++i) sched_yield();
  // The dump, for the next writer: by path now, while the path still names
  // it (a setns into another mount namespace may change that).
  if (g_w.opened && !g_w.failed) g_handover_fd.store(reopen_dump(/*high=*/true), std::memory_order_release);
  return true;
}

void writer_resume() {
  HookScope scope(HookDepth::kInternal);
  if (g_w.opened && !g_w.failed && g_handover_fd.load(std::memory_order_relaxed) < 0) {
    log_line(
        {"cannot reopen the dump ", g_w.path, " after a namespace change; recording stopped, the program goes on"});
    g_state.store(RecorderState::kStopped);
    return;
  }
  if (!start_thread(/*eager=*/false)) g_state.store(RecorderState::kStopped);
  const int left = g_handover_fd.exchange(-1);
  if (left >= 0) guarded_close(left);
}

void writer_restart_in_child() {
  // The parent's file and thread are not ours; its buffers and compression
  // context are ours to reuse (copies of the parent's pages).
  const Writer parent = g_w;
  g_w = Writer{};
  g_w.raw = parent.raw;
  g_w.payload = parent.payload;
  g_w.columns = parent.columns;
  g_w.zbuf = parent.zbuf;
  g_w.zcap = parent.zcap;
  g_w.cmdline = parent.cmdline;
  // The tables must start zero-filled: the parent's entries carry sequence
  // numbers that a new AgeCoder would take for its own.
  g_w.ages_mem = parent.ages_mem;
  if (g_w.ages_mem != nullptr) std::memset(g_w.ages_mem, 0, format::AgeCoder::kMemoryBytes);
  g_w.cctx_mem = parent.cctx_mem;
  g_w.cctx_bytes = parent.cctx_bytes;
  g_wake.store(0);
  g_finish_requested.store(0);
  g_finish_done.store(0);
  g_sync_requested.store(0);
  g_sync_done.store(0);
  g_exec_claim.store(false);
  g_exec_requested.store(false);
  g_park_requested.store(0);
  g_parked.store(0);
  g_handover_fd.store(-1);
  g_exec_error.store(0);
  g_started.store(false);
  for (Toggle& t : g_toggles) t.ready.store(0);
  g_toggle_next.store(0);
  control_forget_after_fork();
  if (!g_enabled.load()) note_recording_toggle(false, now_ns(), format::Source::kStart);
  modules_mark_unwritten();
  // Like the parent at its start, the child gets a writer when it needs one.
  g_launched.store(false);
  g_ticking.store(false);
  g_w.pid = static_cast<std::uint64_t>(getpid());
  g_w.ppid = static_cast<std::uint64_t>(getppid());
  if (!prepare_launch()) g_state.store(RecorderState::kStopped);
}

std::uint64_t writer_control_stamp() {
  const std::uint64_t t = unique_stamp();
  // A lone program thread stamps its events with the last tick: a tick taken
  // after the stamp sorts them after it.
  if (g_ticking.load(std::memory_order_relaxed)) publish_tick();
  return t;
}

void writer_put_marker(format::Source source, std::string_view label) {
  const std::uint64_t t = writer_control_stamp();
  put_record([&](format::RecordEncoder& enc) { return enc.marker(t, source, label); });
}

const char* writer_dump_path() { return g_w.path; }

void note_recording_toggle(bool on, std::uint64_t time_ns, format::Source source) {
  const std::uint32_t i = g_toggle_next.fetch_add(1, std::memory_order_relaxed);
  Toggle& t = g_toggles[i % kToggleSlots];
  // A slot still unread from kToggleSlots toggles ago is overwritten; the
  // writer reads them within milliseconds, so that takes a signal storm.
  t.on = on;
  t.source = source;
  t.time_ns = time_ns;
  t.ready.store(i / kToggleSlots + 1, std::memory_order_release);
}

}  // namespace memrec::preload
