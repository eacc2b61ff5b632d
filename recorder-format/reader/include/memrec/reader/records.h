// The decoded records of a frame (FORMAT.md, "Records") as plain structs with
// absolute values: deltas are already applied. The decoder hands them to a
// RecordVisitor one at a time, so a caller never has to hold a whole dump.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "memrec/format/record_encoder.h"
#include "memrec/format/records.h"

namespace memrec::reader {

template <typename Tag>
struct Id {
  std::uint32_t value = 0;
  auto operator<=>(const Id&) const = default;
};
using StackId = Id<struct StackTag>;    // 0: no stack (unwinding failed or the table was full)
using ModuleId = Id<struct ModuleTag>;  // from 1

// Event records carry the tid of the Thread record in force.
struct ThreadRecord {
  std::uint64_t tid = 0;
};
struct AllocRecord {
  std::uint64_t tid = 0;
  format::AllocFn fn = format::AllocFn::kMalloc;
  std::uint64_t time_ns = 0;
  std::uint64_t addr = 0;
  std::uint64_t size = 0;
  StackId stack;
};
struct FreeRecord {
  std::uint64_t tid = 0;
  std::uint64_t time_ns = 0;
  std::uint64_t addr = 0;
};
struct ReallocRecord {
  std::uint64_t tid = 0;
  format::AllocFn fn = format::AllocFn::kRealloc;
  std::uint64_t free_ns = 0;  // the old block is released then
  std::uint64_t old_addr = 0;
  std::uint64_t alloc_ns = 0;  // and the new one allocated then
  std::uint64_t new_addr = 0;
  std::uint64_t size = 0;
  StackId stack;
};
struct MmapRecord {
  std::uint64_t tid = 0;
  std::uint64_t time_ns = 0;
  std::uint64_t addr = 0;
  std::uint64_t size = 0;
  std::uint64_t prot = 0;
  std::uint64_t flags = 0;
  StackId stack;
};
struct MunmapRecord {
  std::uint64_t tid = 0;
  std::uint64_t time_ns = 0;
  std::uint64_t addr = 0;
  std::uint64_t size = 0;
};
struct MremapRecord {
  std::uint64_t tid = 0;
  std::uint64_t free_ns = 0;
  std::uint64_t old_addr = 0;
  std::uint64_t old_size = 0;
  std::uint64_t alloc_ns = 0;
  std::uint64_t new_addr = 0;
  std::uint64_t new_size = 0;
  StackId stack;
};
struct StackRecord {
  StackId id;
  std::uint64_t module_gen = 0;
  std::uint8_t flags = 0;
  std::vector<std::uint64_t> ips;  // return addresses, innermost first

  bool truncated() const { return (flags & format::kStackTruncated) != 0; }
};
struct ModuleLoadRecord {
  ModuleId id;
  std::uint64_t gen = 0;
  std::string path;
  std::uint64_t bias = 0;
  std::vector<std::byte> build_id;
  std::vector<format::Segment> segments;
};
struct ModuleUnloadRecord {
  ModuleId id;
  std::uint64_t gen = 0;
};
struct ThreadStartRecord {
  std::uint64_t tid = 0;
  std::uint64_t time_ns = 0;
  std::string name;
};
struct ThreadNameRecord {
  std::uint64_t tid = 0;
  std::string name;
};
struct ThreadExitRecord {
  std::uint64_t tid = 0;
  std::uint64_t time_ns = 0;
};
struct RssRecord {
  std::uint64_t time_ns = 0;
  std::uint64_t rss_bytes = 0;
};
struct RecordingRecord {
  std::uint64_t time_ns = 0;
  bool on = false;
  format::Source source = format::Source::kSignal;  // before version 7, always kSignal
};
struct MarkerRecord {
  std::uint64_t time_ns = 0;
  format::Source source = format::Source::kApi;
  std::string label;
};
struct CountersRecord {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> values;  // key, value; unknown keys kept
};
struct EndRecord {
  std::uint64_t time_ns = 0;
};
struct ExecRecord {
  std::uint64_t time_ns = 0;
  std::uint32_t error = 0;  // 0: about to exec `path`; else the errno its exec failed with
  std::string path;
};

using Record =
    std::variant<ThreadRecord, AllocRecord, FreeRecord, ReallocRecord, MmapRecord, MunmapRecord, MremapRecord,
                 StackRecord, ModuleLoadRecord, ModuleUnloadRecord, ThreadStartRecord, ThreadNameRecord,
                 ThreadExitRecord, RssRecord, RecordingRecord, CountersRecord, EndRecord, ExecRecord, MarkerRecord>;

// Receives a frame's records in file order. Override what you need; the
// rest are ignored. References are valid only during the call.
class RecordVisitor {
 public:
  virtual ~RecordVisitor() = default;
  virtual void on_thread(const ThreadRecord&) {}
  virtual void on_alloc(const AllocRecord&) {}
  virtual void on_free(const FreeRecord&) {}
  virtual void on_realloc(const ReallocRecord&) {}
  virtual void on_mmap(const MmapRecord&) {}
  virtual void on_munmap(const MunmapRecord&) {}
  virtual void on_mremap(const MremapRecord&) {}
  virtual void on_stack(const StackRecord&) {}
  virtual void on_module_load(const ModuleLoadRecord&) {}
  virtual void on_module_unload(const ModuleUnloadRecord&) {}
  virtual void on_thread_start(const ThreadStartRecord&) {}
  virtual void on_thread_name(const ThreadNameRecord&) {}
  virtual void on_thread_exit(const ThreadExitRecord&) {}
  virtual void on_rss(const RssRecord&) {}
  virtual void on_recording(const RecordingRecord&) {}
  virtual void on_counters(const CountersRecord&) {}
  virtual void on_end(const EndRecord&) {}
  virtual void on_exec(const ExecRecord&) {}
  virtual void on_marker(const MarkerRecord&) {}
};

}  // namespace memrec::reader

template <typename Tag>
struct std::hash<memrec::reader::Id<Tag>> {
  std::size_t operator()(const memrec::reader::Id<Tag>& id) const noexcept { return id.value; }
};
