// load_limits DUMP THREADS: how fast this machine can read a dump at all, for
// scripts/bench --large. Two passes over every frame on THREADS threads: zstd
// alone (decompress into a buffer), then zstd and the column decoding (each
// record visited, heap events counted). Whatever `memrec report` takes beyond
// the second is the analyzer's own work: ordering, replay, symbols. Prints one
// line per pass: "zstd|decode SECONDS CPU_SECONDS EVENTS".
#include <sys/resource.h>
#include <zstd.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "memrec/reader/dump_reader.h"
#include "memrec/reader/frame_decoder.h"

namespace {

using memrec::reader::Dump;
using memrec::reader::FrameInfo;

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto s = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  return s(usage.ru_utime) + s(usage.ru_stime);
}

// Counts the heap events a frame's records make (a realloc or mremap: two).
class EventCounter final : public memrec::reader::RecordVisitor {
 public:
  void on_alloc(const memrec::reader::AllocRecord&) override { ++events; }
  void on_free(const memrec::reader::FreeRecord&) override { ++events; }
  void on_realloc(const memrec::reader::ReallocRecord&) override { events += 2; }
  void on_mmap(const memrec::reader::MmapRecord&) override { ++events; }
  void on_munmap(const memrec::reader::MunmapRecord&) override { ++events; }
  void on_mremap(const memrec::reader::MremapRecord&) override { events += 2; }
  std::uint64_t events = 0;
};

// Runs `work(frame, state)` over every frame on `threads` threads; prints the
// wall and CPU seconds and the sum of what the workers counted. False when a
// frame failed.
template <typename Work>
bool timed_pass(const char* name, const Dump& dump, unsigned threads, Work work) {
  std::atomic<std::size_t> next{0};
  std::atomic<std::uint64_t> counted{0};
  std::atomic<bool> failed{false};
  const double cpu_before = cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      memrec::reader::FrameDecoder decoder;
      std::vector<std::byte> buffer;
      std::uint64_t mine = 0;
      for (std::size_t i = next.fetch_add(1); i < dump.index.frames.size(); i = next.fetch_add(1)) {
        if (!work(dump.index.frames[i], decoder, buffer, mine)) failed = true;
      }
      counted += mine;
    });
  }
  for (std::thread& w : workers) w.join();
  const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - start;
  std::printf("%s %.2f %.2f %llu\n", name, wall.count(), cpu_seconds() - cpu_before,
              static_cast<unsigned long long>(counted.load()));
  return !failed;
}

}  // namespace

int main(int argc, char** argv) {
  unsigned threads = 0;
  if (argc != 3 || std::from_chars(argv[2], argv[2] + std::string(argv[2]).size(), threads).ec != std::errc{} ||
      threads == 0) {
    std::fprintf(stderr, "usage: load_limits DUMP THREADS (THREADS >= 1)\n");
    return 1;
  }
  auto dump = memrec::reader::open_dump(argv[1]);
  if (!dump) {
    std::fprintf(stderr, "load_limits: %s\n", dump.error().message.c_str());
    return 2;
  }
  const auto bytes = dump->bytes();
  const bool zstd_ok =
      timed_pass("zstd", *dump, threads,
                 [&](const FrameInfo& f, memrec::reader::FrameDecoder&, std::vector<std::byte>& out, std::uint64_t& n) {
                   // One context per worker, for the process's life: a benchmark's.
                   thread_local ZSTD_DCtx* ctx = ZSTD_createDCtx();
                   out.resize(f.decompressed_bytes);
                   const std::size_t got = ZSTD_decompressDCtx(ctx, out.data(), out.size(),
                                                               bytes.data() + f.payload_offset(), f.compressed_bytes);
                   n += ZSTD_isError(got) != 0 ? 0 : got;
                   return ZSTD_isError(got) == 0;
                 });
  const bool decode_ok = timed_pass(
      "decode", *dump, threads,
      [&](const FrameInfo& f, memrec::reader::FrameDecoder& decoder, std::vector<std::byte>&, std::uint64_t& n) {
        EventCounter counter;
        const bool ok = decoder.decode(bytes, f, dump->name(), counter).ok();
        n += counter.events;
        return ok;
      });
  if (!zstd_ok || !decode_ok) {
    std::fprintf(stderr, "load_limits: %s: a frame did not decode\n", argv[1]);
    return 2;
  }
  return 0;
}
