// Decodes a frame's payload into records (FORMAT.md, "Records" and "Delta
// state"), one small function per tag. The input may be hostile: every read
// is bounds-checked, every count is checked against the bytes left before
// anything is reserved, and a failure stops the frame with kCorrupt.
#include <array>

#include <fmt/format.h>

#include "byte_reader.h"
#include "memrec/reader/frame_decoder.h"
#include "record_body.h"

namespace memrec::reader {
namespace {

using detail::DecodeState;
using format::Tag;

struct Cursor {
  ByteReader& in;
  DecodeState& state;
  RecordVisitor& visitor;

  std::uint64_t time() { return state.delta.time_ns = in.delta_from(state.delta.time_ns); }
  std::uint64_t addr() { return state.delta.addr = in.delta_from(state.delta.addr); }
  StackId stack() {
    state.delta.stack = in.delta_from(state.delta.stack);
    return StackId{checked_u32(state.delta.stack, "a stack id is over 32 bits")};
  }
  std::uint32_t checked_u32(std::uint64_t v, const char* why) {
    if (v > UINT32_MAX) in.fail(why);
    return static_cast<std::uint32_t>(v);
  }
  // Event records belong to the thread named by the last Thread record.
  std::uint64_t event_tid() {
    if (!state.have_thread) in.fail("an event comes before any Thread record");
    return state.tid;
  }
  std::string name() { return std::string(in.string(format::kMaxStringBytes)); }
};

void decode_thread(Cursor& c) {
  ThreadRecord r{c.in.varint()};
  if (!c.in.ok()) return;
  c.state.have_thread = true;
  c.state.tid = r.tid;
  c.visitor.on_thread(r);
}

void decode_alloc(Cursor& c, std::uint8_t tag) {
  AllocRecord r;
  r.tid = c.event_tid();
  r.fn = static_cast<format::AllocFn>(tag & ~format::kAllocTagMask);
  r.time_ns = c.time();
  r.addr = c.addr();
  r.size = c.in.varint();
  r.stack = c.stack();
  if (c.in.ok()) c.visitor.on_alloc(r);
}

void decode_free(Cursor& c) {
  FreeRecord r;
  r.tid = c.event_tid();
  r.time_ns = c.time();
  r.addr = c.addr();
  if (c.in.ok()) c.visitor.on_free(r);
}

void decode_realloc(Cursor& c) {
  ReallocRecord r;
  r.tid = c.event_tid();
  const std::uint8_t fn = c.in.u8();
  if (fn >= format::kAllocFnCount) c.in.fail("a realloc names an unknown function");
  r.fn = static_cast<format::AllocFn>(fn);
  r.free_ns = c.time();
  r.old_addr = c.addr();
  // dt_alloc is unsigned: the allocation follows the release.
  r.alloc_ns = c.state.delta.time_ns = r.free_ns + c.in.varint();
  r.new_addr = c.addr();
  r.size = c.in.varint();
  r.stack = c.stack();
  if (c.in.ok()) c.visitor.on_realloc(r);
}

void decode_mmap(Cursor& c) {
  MmapRecord r;
  r.tid = c.event_tid();
  r.time_ns = c.time();
  r.addr = c.addr();
  r.size = c.in.varint();
  r.prot = c.in.varint();
  r.flags = c.in.varint();
  r.stack = c.stack();
  if (c.in.ok()) c.visitor.on_mmap(r);
}

void decode_munmap(Cursor& c) {
  MunmapRecord r;
  r.tid = c.event_tid();
  r.time_ns = c.time();
  r.addr = c.addr();
  r.size = c.in.varint();
  if (c.in.ok()) c.visitor.on_munmap(r);
}

void decode_mremap(Cursor& c) {
  MremapRecord r;
  r.tid = c.event_tid();
  r.free_ns = c.time();
  r.old_addr = c.addr();
  r.old_size = c.in.varint();
  r.alloc_ns = c.state.delta.time_ns = r.free_ns + c.in.varint();
  r.new_addr = c.addr();
  r.new_size = c.in.varint();
  r.stack = c.stack();
  if (c.in.ok()) c.visitor.on_mremap(r);
}

void decode_stack(Cursor& c) {
  StackRecord r;
  r.id = StackId{c.checked_u32(c.in.varint(), "a stack id is over 32 bits")};
  r.module_gen = c.in.varint();
  r.flags = c.in.u8();
  const std::uint64_t depth = c.in.varint();
  const bool shares = (r.flags & format::kStackShared) != 0;
  const std::uint64_t shared = shares ? c.in.varint() : 0;
  if (!c.in.ok()) return;
  static_assert(format::kMaxStackDepth == 1024, "update the message below");
  if (depth > format::kMaxStackDepth) return c.in.fail("a stack is deeper than the format's 1024 frames");
  const std::vector<std::uint64_t>& previous = c.state.last_stack;
  if (shares && (shared == 0 || shared > depth || shared > previous.size())) {
    return c.in.fail("a stack shares more outer frames than the frame's stack before it has");
  }
  if (depth - shared > c.in.remaining()) return c.in.fail("a stack runs off the end");
  r.ips.reserve(static_cast<std::size_t>(depth));
  std::uint64_t ip = 0;
  for (std::uint64_t i = 0; i < depth - shared && c.in.ok(); ++i) r.ips.push_back(ip = c.in.delta_from(ip));
  if (!c.in.ok()) return;
  r.ips.insert(r.ips.end(), previous.end() - static_cast<std::ptrdiff_t>(shared), previous.end());
  // Readers see every stack whole: the bit says how it was stored only.
  r.flags &= static_cast<std::uint8_t>(~format::kStackShared);
  c.state.last_stack = r.ips;
  c.visitor.on_stack(r);
}

void decode_module_load(Cursor& c) {
  ModuleLoadRecord r;
  r.id = ModuleId{c.checked_u32(c.in.varint(), "a module id is over 32 bits")};
  r.gen = c.in.varint();
  r.path = c.name();
  r.bias = c.in.varint();
  const auto build_id = c.in.bytes(format::kMaxStringBytes);
  r.build_id.assign(build_id.begin(), build_id.end());
  const std::uint64_t n = c.in.varint();
  if (!c.in.ok()) return;
  if (n > c.in.remaining() / 4) return c.in.fail("a module's segment count exceeds the frame");  // >= 4 bytes each
  r.segments.resize(static_cast<std::size_t>(n));
  for (format::Segment& seg : r.segments) {
    seg.vaddr = c.in.varint();
    seg.memsz = c.in.varint();
    seg.file_offset = c.in.varint();
    seg.flags = c.in.u8();
  }
  if (c.in.ok()) c.visitor.on_module_load(r);
}

void decode_module_unload(Cursor& c) {
  ModuleUnloadRecord r;
  r.id = ModuleId{c.checked_u32(c.in.varint(), "a module id is over 32 bits")};
  r.gen = c.in.varint();
  if (c.in.ok()) c.visitor.on_module_unload(r);
}

void decode_thread_start(Cursor& c) {
  ThreadStartRecord r;
  r.tid = c.in.varint();
  r.time_ns = c.time();
  r.name = c.name();
  if (c.in.ok()) c.visitor.on_thread_start(r);
}

void decode_thread_name(Cursor& c) {
  ThreadNameRecord r;
  r.tid = c.in.varint();
  r.name = c.name();
  if (c.in.ok()) c.visitor.on_thread_name(r);
}

void decode_thread_exit(Cursor& c) {
  ThreadExitRecord r;
  r.tid = c.in.varint();
  r.time_ns = c.time();
  if (c.in.ok()) c.visitor.on_thread_exit(r);
}

void decode_rss(Cursor& c) {
  RssRecord r;
  r.time_ns = c.time();
  r.rss_bytes = c.in.varint();
  if (c.in.ok()) c.visitor.on_rss(r);
}

void decode_recording(Cursor& c) {
  RecordingRecord r;
  r.time_ns = c.time();
  // Bit 0 on; the source above it (version 7; 0, the signal, before).
  const std::uint8_t flags = c.in.u8();
  if ((flags >> 1) >= format::kSourceCount) c.in.fail("a Recording record names an unknown source");
  r.on = (flags & 1) != 0;
  r.source = static_cast<format::Source>(flags >> 1);
  if (c.in.ok()) c.visitor.on_recording(r);
}

void decode_marker(Cursor& c) {
  MarkerRecord r;
  r.time_ns = c.time();
  const std::uint8_t source = c.in.u8();
  if (source >= format::kSourceCount) c.in.fail("a Marker record names an unknown source");
  r.source = static_cast<format::Source>(source);
  r.label = c.name();
  if (c.in.ok()) c.visitor.on_marker(r);
}

void decode_counters(Cursor& c) {
  CountersRecord r;
  const std::uint64_t n = c.in.varint();
  if (!c.in.ok()) return;
  if (n > c.in.remaining() / 2) return c.in.fail("a counter count exceeds the frame");  // >= 2 bytes each
  r.values.reserve(static_cast<std::size_t>(n));
  for (std::uint64_t i = 0; i < n && c.in.ok(); ++i) {
    const std::uint64_t key = c.in.varint();
    r.values.emplace_back(key, c.in.varint());
  }
  if (c.in.ok()) c.visitor.on_counters(r);
}

void decode_end(Cursor& c) {
  EndRecord r{c.time()};
  if (c.in.ok()) c.visitor.on_end(r);
}

void decode_exec(Cursor& c) {
  ExecRecord r;
  r.time_ns = c.time();
  r.error = c.checked_u32(c.in.varint(), "an Exec record's errno is over 32 bits");
  r.path = c.name();
  if (c.in.ok()) c.visitor.on_exec(r);
}

using DecodeFn = void (*)(Cursor&);

// Tag -> decoder; null for tags this version does not know (Alloc tags are
// handled apart: they carry the function in their low nibble).
constexpr auto kDecoders = [] {
  std::array<DecodeFn, 256> t{};
  auto set = [&t](Tag tag, DecodeFn fn) { t[static_cast<std::uint8_t>(tag)] = fn; };
  set(Tag::kThread, decode_thread);
  set(Tag::kFree, decode_free);
  set(Tag::kRealloc, decode_realloc);
  set(Tag::kMmap, decode_mmap);
  set(Tag::kMunmap, decode_munmap);
  set(Tag::kMremap, decode_mremap);
  set(Tag::kStack, decode_stack);
  set(Tag::kModuleLoad, decode_module_load);
  set(Tag::kModuleUnload, decode_module_unload);
  set(Tag::kThreadStart, decode_thread_start);
  set(Tag::kThreadName, decode_thread_name);
  set(Tag::kThreadExit, decode_thread_exit);
  set(Tag::kRss, decode_rss);
  set(Tag::kRecording, decode_recording);
  set(Tag::kCounters, decode_counters);
  set(Tag::kEnd, decode_end);
  set(Tag::kExec, decode_exec);
  set(Tag::kMarker, decode_marker);
  return t;
}();

}  // namespace

namespace detail {

bool decode_record_body(ByteReader& in, std::uint8_t tag, DecodeState& state, RecordVisitor& visitor) {
  Cursor c{in, state, visitor};
  if ((tag & format::kAllocTagMask) == static_cast<std::uint8_t>(Tag::kAllocBase)) {
    if ((tag & ~format::kAllocTagMask) >= format::kAllocFnCount) return false;
    decode_alloc(c, tag);
    return true;
  }
  if (kDecoders[tag] == nullptr) return false;
  kDecoders[tag](c);
  return true;
}

}  // namespace detail

Status decode_records(std::span<const std::byte> payload, std::string_view name, std::uint64_t frame_offset,
                      RecordVisitor& visitor) {
  ByteReader in(payload);
  DecodeState state;
  for (std::uint64_t index = 0; !in.at_end(); ++index) {
    const std::size_t record_at = in.pos();
    const std::uint8_t tag = in.u8();
    if (!detail::decode_record_body(in, tag, state, visitor)) in.fail("unknown record tag");
    if (!in.ok()) {
      return Error{ErrorCode::kCorrupt,
                   fmt::format("{}: corrupt frame at offset {}: {} (record {}, tag 0x{:02x}, payload byte {}); the "
                               "file is damaged from there on",
                               name, frame_offset, in.failure(), index, tag, record_at)};
    }
  }
  return {};
}

}  // namespace memrec::reader
