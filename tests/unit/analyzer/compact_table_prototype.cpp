// PROTOTYPE, not used by memrec view: measures what the allocation table of a
// dump would take on disk if its columns were delta-coded in blocks of 4,096
// rows (varints, then zstd per block), and what encoding and decoding them
// cost, to size the compact table of docs/design/compact_table.md. Prints one
// JSON line. Run by hand on a mid-size dump:
//   compact_table_prototype DUMP [--level N]
#include <time.h>
#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/allocation_table.h"
#include "reports/heap_report.h"

using namespace memrec::analyzer;

namespace {

constexpr std::uint32_t kBlockRows = 4096;

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

void put_varint(std::vector<std::uint8_t>& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<std::uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<std::uint8_t>(v));
}

std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}

// One column's encoded bytes: varints, and zstd of each block's varints.
struct Column {
  const char* name;
  std::uint64_t varint_bytes = 0;
  std::uint64_t zstd_bytes = 0;
  std::vector<std::uint8_t> block;
  std::vector<std::vector<char>> compressed;  // every block, for the decode timing
  std::vector<std::size_t> raw_sizes;
};

void close_block(Column& c, int level, std::vector<char>& scratch, ZSTD_CCtx* cctx) {
  if (c.block.empty()) return;
  c.varint_bytes += c.block.size();
  scratch.resize(ZSTD_compressBound(c.block.size()));
  const std::size_t n = ZSTD_compressCCtx(cctx, scratch.data(), scratch.size(), c.block.data(), c.block.size(), level);
  if (ZSTD_isError(n)) {
    std::cerr << "compact_table_prototype: zstd: " << ZSTD_getErrorName(n) << "\n";
    std::exit(3);
  }
  c.zstd_bytes += n;
  c.compressed.emplace_back(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(n));
  c.raw_sizes.push_back(c.block.size());
  c.block.clear();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: compact_table_prototype DUMP [--level N]\n";
    return 2;
  }
  int level = 1;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--level") == 0 && i + 1 < argc) {
      level = std::atoi(argv[++i]);
    } else {
      std::cerr << "compact_table_prototype: unknown argument " << argv[i] << "\n";
      return 2;
    }
  }
  const double t0 = cpu_seconds();
  AllocationTableBuilder builder;
  const auto run = replay_into(argv[1], LoadOptions{}, builder);
  if (!run) {
    std::cerr << "compact_table_prototype: " << run.error().message << "\n";
    return 2;
  }
  const AllocationTable t = builder.finish();
  const double t1 = cpu_seconds();

  std::vector<Column> cols = {{"alloc_time"}, {"lifetime"}, {"size"},     {"stack"},
                              {"address"},    {"thread"},   {"free_age"}, {"stack_rows"}};
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  std::vector<char> scratch;
  std::uint64_t prev_time = 0;
  std::uint64_t prev_addr = 0;
  std::uint32_t frees_done = 0;
  const auto rows = static_cast<std::uint32_t>(t.rows());
  for (std::uint32_t r = 0; r < rows; ++r) {
    const std::uint64_t at = t.alloc_ns(r);
    put_varint(cols[0].block, at - prev_time);
    prev_time = at;
    const std::uint64_t freed = t.free_ns(r);
    put_varint(cols[1].block, freed == kNeverFreed ? 0 : freed - at + 1);
    put_varint(cols[2].block, t.size(r));
    put_varint(cols[3].block, t.stack(r));
    const std::uint64_t addr = t.address(r);
    put_varint(cols[4].block, zigzag(static_cast<std::int64_t>(addr - prev_addr)));
    prev_addr = addr;
    put_varint(cols[5].block, t.thread(r));
    if ((r + 1) % kBlockRows == 0 || r + 1 == rows) {
      for (std::size_t c = 0; c < 6; ++c) close_block(cols[c], level, scratch, cctx);
    }
  }
  const double t_rows = cpu_seconds();
  // The frees in merged order: each as the rows allocated since its row (its
  // age in rows). rows_before_free() walks order bits from a checkpoint: a
  // builder would know the count when it takes the free.
  for (std::uint32_t k = 0; k < t.frees(); ++k) {
    const std::uint32_t row = t.free_row(k);
    const std::uint32_t before = t.rows_before_free(k);
    put_varint(cols[6].block, before - row);
    if (++frees_done % kBlockRows == 0 || k + 1 == t.frees()) close_block(cols[6], level, scratch, cctx);
  }
  // The per-site index, by stack (a site merges stacks): each stack's rows
  // as gaps from the one before, in blocks of 4,096 entries.
  const double t_frees = cpu_seconds();
  {
    std::vector<std::vector<std::uint32_t>> rows_of;
    for (std::uint32_t r = 0; r < rows; ++r) {
      const std::uint32_t s = t.stack(r);
      if (s >= rows_of.size()) rows_of.resize(std::size_t{s} + 1);
      rows_of[s].push_back(r);
    }
    for (const auto& list : rows_of) {
      std::uint32_t prev = 0;
      for (std::size_t i = 0; i < list.size(); ++i) {
        put_varint(cols[7].block, list[i] - prev);
        prev = list[i];
        if ((i + 1) % kBlockRows == 0 || i + 1 == list.size()) close_block(cols[7], level, scratch, cctx);
      }
    }
  }
  const double t2 = cpu_seconds();
  ZSTD_freeCCtx(cctx);
  // Decoding every block of every column back to values: what a query that
  // reads a block on demand pays per block.
  std::uint64_t checksum = 0;
  std::uint64_t blocks = 0;
  std::vector<std::uint8_t> raw;
  for (const Column& c : cols) {
    for (std::size_t b = 0; b < c.compressed.size(); ++b) {
      raw.resize(c.raw_sizes[b]);
      const std::size_t got = ZSTD_decompress(raw.data(), raw.size(), c.compressed[b].data(), c.compressed[b].size());
      if (ZSTD_isError(got) || got != raw.size()) {
        std::cerr << "compact_table_prototype: a block does not decode\n";
        return 3;
      }
      std::uint64_t v = 0;
      unsigned shift = 0;
      for (const std::uint8_t byte : raw) {
        v |= std::uint64_t{byte & 0x7fu} << shift;
        shift += 7;
        if (byte < 0x80) {
          checksum += v;
          v = 0;
          shift = 0;
        }
      }
      ++blocks;
    }
  }
  const double t3 = cpu_seconds();

  const double n = rows > 0 ? static_cast<double>(rows) : 1.0;
  nlohmann::json per_column = nlohmann::json::object();
  std::uint64_t varint_total = 0;
  std::uint64_t zstd_total = 0;
  for (const Column& c : cols) {
    per_column[c.name] = {{"varint_bytes_per_row", static_cast<double>(c.varint_bytes) / n},
                          {"zstd_bytes_per_row", static_cast<double>(c.zstd_bytes) / n}};
    varint_total += c.varint_bytes;
    zstd_total += c.zstd_bytes;
  }
  // Kept as today, not coded here: the order bits (a bit an event), the
  // checkpoints and skip maxima (a few bytes per 256 to 1,024 rows).
  const double order_bytes = static_cast<double>(t.events()) / 8.0;
  nlohmann::json out = {{"rows", rows},
                        {"frees", t.frees()},
                        {"level", level},
                        {"table_bytes_per_row_today", static_cast<double>(t.memory_bytes()) / n},
                        {"varint_bytes_per_row", (static_cast<double>(varint_total) + order_bytes) / n},
                        {"zstd_bytes_per_row", (static_cast<double>(zstd_total) + order_bytes) / n},
                        {"columns", per_column},
                        {"load_and_table_cpu_s", t1 - t0},
                        {"encode_cpu_s", t2 - t1},
                        {"encode_ns_per_row", (t2 - t1) * 1e9 / n},
                        {"encode_rows_ns_per_row", (t_rows - t1) * 1e9 / n},
                        {"encode_site_index_ns_per_row", (t2 - t_frees) * 1e9 / n},
                        {"decode_cpu_s", t3 - t2},
                        {"decode_us_per_block", blocks > 0 ? (t3 - t2) * 1e6 / static_cast<double>(blocks) : 0.0},
                        {"checksum", checksum}};
  std::cout << out.dump() << std::endl;
  return 0;
}
