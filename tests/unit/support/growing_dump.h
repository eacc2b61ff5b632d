// Dumps that grow while they are read: a generated multi-thread dump whose
// frames hold each thread's events in batches (as the writer drains them,
// so a frame may hold events older than the one before), and the sizes a
// test writes it out at, one step after another (the dump followers' tests).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "load/heap_event.h"
#include "support/dump_builder.h"

namespace memrec::testing {

inline constexpr std::uint64_t kGrowingStartNs = 1'000'000;  // sample_header's start_mono_ns

// `threads` threads allocate and free, their events reaching frames in
// batches per thread as the writer drains them, so a frame may hold events
// older than the one before. With `end`, the last frame ends in an End record.
// Times start at the header's start_mono_ns.
inline DumpBuilder interleaved_dump(unsigned seed, std::size_t threads, bool end,
                                    const format::FileHeaderFields& fields = sample_header()) {
  std::mt19937 rng(seed);
  std::vector<std::vector<analyzer::HeapEvent>> sequences(threads);
  std::uint64_t now = fields.start_mono_ns;
  for (std::uint64_t i = 0; i < 800; ++i) {
    now += rng() % 3 == 0 ? 1 : 0;  // ties are common
    const std::size_t t = rng() % threads;
    const std::uint64_t addr = 0x10000 + 0x40 * (rng() % 64);
    const auto op = rng() % 2 == 0 ? analyzer::HeapOp::kAlloc : analyzer::HeapOp::kFree;
    const auto stack = static_cast<std::uint32_t>(1 + addr / 0x40 % 3);
    const bool alloc = op == analyzer::HeapOp::kAlloc;
    sequences[t].push_back({now, addr, alloc ? 32u * stack : 0u, analyzer::StackId{alloc ? stack : 0u}, op});
  }
  DumpBuilder b(fields);
  std::vector<std::size_t> next(threads, 0);
  const auto unwritten = [&] {
    for (std::size_t t = 0; t < threads; ++t) {
      if (next[t] < sequences[t].size()) return true;
    }
    return false;
  };
  const std::uint64_t ips[][2] = {{0x400010, 0x400100}, {0x400020, 0x400100}, {0x400030, 0x400200}};
  bool first = true;
  while (unwritten()) {
    b.frame([&](format::RecordEncoder& e) {
      if (first) {
        for (std::uint32_t s = 0; s < 3; ++s) e.stack(s + 1, 0, 0, ips[s]);
      }
      first = false;
      for (std::size_t k = 0; k < 3; ++k) {
        const std::size_t t = rng() % threads;
        const std::size_t n = std::min<std::size_t>(rng() % 20, sequences[t].size() - next[t]);
        if (n == 0) continue;
        e.thread(7 + t);
        for (std::size_t j = 0; j < n; ++j) {
          const analyzer::HeapEvent& ev = sequences[t][next[t]++];
          if (ev.op == analyzer::HeapOp::kAlloc) {
            e.alloc(format::AllocFn::kMalloc, ev.time_ns, ev.addr, ev.size, ev.stack.value);
          } else {
            e.free(ev.time_ns, ev.addr);
          }
        }
      }
      if (end && !unwritten()) e.end(now + 1);
    });
  }
  return b;
}

inline std::string temp_dump_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + "." + std::to_string(getpid()))).string();
}

// Makes the file at `path` the first `n` bytes of `bytes`: appends what is
// missing, as the recorder does; writes it afresh if it is longer.
inline void write_prefix(const std::string& path, const std::vector<std::byte>& bytes, std::size_t n) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  const bool append = !ec && size <= n;
  std::ofstream out(path, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
  const std::size_t from = append ? static_cast<std::size_t>(size) : 0;
  out.write(reinterpret_cast<const char*>(bytes.data() + from), static_cast<std::streamsize>(n - from));
}

// The file's sizes at each step: every frame boundary, and the middle of
// every frame, up to the whole file.
inline std::vector<std::size_t> cut_points(const DumpBuilder& b) {
  std::vector<std::size_t> cuts;
  for (std::size_t i = 0; i < b.frame_offsets().size(); ++i) {
    cuts.push_back(b.frame_offsets()[i]);
    cuts.push_back((b.frame_offsets()[i] + b.frame_ends()[i]) / 2);
  }
  cuts.push_back(b.bytes().size());
  return cuts;
}

}  // namespace memrec::testing
