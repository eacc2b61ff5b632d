// Encodes records into one frame's payload (FORMAT.md, "Records"). Times,
// addresses and stack ids are deltas against the previous record of the same
// frame; `begin_frame()` resets that state so every frame decodes on its own.
// Allocation-free: the preload's writer thread calls it. Each method writes a
// whole record or nothing and returns false when the buffer is full, so the
// caller can flush the frame and write the record again.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "memrec/format/byte_writer.h"
#include "memrec/format/records.h"

namespace memrec::format {

struct Segment {
  std::uint64_t vaddr = 0;  // p_vaddr: add the module's bias for the address in memory
  std::uint64_t memsz = 0;
  std::uint64_t file_offset = 0;
  std::uint8_t flags = 0;  // kSegmentExec | kSegmentWrite | kSegmentRead
};

struct CounterValue {
  Counter key;
  std::uint64_t value;
};

// The running values deltas are taken against.
struct DeltaState {
  std::uint64_t time_ns = 0;
  std::uint64_t addr = 0;
  std::uint64_t stack = 0;
};

class RecordEncoder {
 public:
  explicit RecordEncoder(std::span<std::byte> out) : w_(out) {}

  std::size_t size() const { return w_.size(); }
  std::span<std::byte> written() const { return w_.written(); }
  void begin_frame() { restart({}); }
  // Empties the buffer and continues the deltas from `state` (a caller that
  // codes some records elsewhere, ColumnEncoder, hands its own state over).
  void restart(const DeltaState& state) {
    w_.rewind(0);
    state_ = state;
  }
  const DeltaState& state() const { return state_; }

  bool thread(std::uint64_t tid) {
    return record([&](ByteWriter& w, DeltaState&) {
      tag(w, Tag::kThread);
      w.varint(tid);
    });
  }
  bool alloc(AllocFn fn, std::uint64_t time_ns, std::uint64_t addr, std::uint64_t size, std::uint32_t stack) {
    if (w_.room() >= kMaxFastRecord) {
      std::byte* p = w_.cursor();
      *p++ = std::byte{
          static_cast<std::uint8_t>(static_cast<std::uint8_t>(Tag::kAllocBase) | static_cast<std::uint8_t>(fn))};
      p = put_varint_unchecked(delta(state_.time_ns, time_ns), p);
      p = put_varint_unchecked(delta(state_.addr, addr), p);
      p = put_varint_unchecked(size, p);
      p = put_varint_unchecked(delta(state_.stack, stack), p);
      w_.advance(p);
      state_ = DeltaState{time_ns, addr, stack};
      return true;
    }
    return record([&](ByteWriter& w, DeltaState& s) {
      w.u8(static_cast<std::uint8_t>(static_cast<std::uint8_t>(Tag::kAllocBase) | static_cast<std::uint8_t>(fn)));
      put_time(w, s, time_ns);
      put_addr(w, s, addr);
      w.varint(size);
      put_stack(w, s, stack);
    });
  }
  bool free(std::uint64_t time_ns, std::uint64_t addr) {
    if (w_.room() >= kMaxFastRecord) {
      std::byte* p = w_.cursor();
      *p++ = std::byte{static_cast<std::uint8_t>(Tag::kFree)};
      p = put_varint_unchecked(delta(state_.time_ns, time_ns), p);
      p = put_varint_unchecked(delta(state_.addr, addr), p);
      w_.advance(p);
      state_.time_ns = time_ns;
      state_.addr = addr;
      return true;
    }
    return record([&](ByteWriter& w, DeltaState& s) {
      tag(w, Tag::kFree);
      put_time(w, s, time_ns);
      put_addr(w, s, addr);
    });
  }
  // `old_addr` is released at `free_ns` and `new_addr` allocated at `alloc_ns`
  // (>= free_ns): the two order stamps a realloc needs (FORMAT.md, "Order").
  bool realloc(AllocFn fn, std::uint64_t free_ns, std::uint64_t old_addr, std::uint64_t alloc_ns,
               std::uint64_t new_addr, std::uint64_t size, std::uint32_t stack) {
    return record([&](ByteWriter& w, DeltaState& s) {
      tag(w, Tag::kRealloc);
      w.u8(static_cast<std::uint8_t>(fn));
      put_time(w, s, free_ns);
      put_addr(w, s, old_addr);
      w.varint(alloc_ns - free_ns);
      s.time_ns = alloc_ns;
      put_addr(w, s, new_addr);
      w.varint(size);
      put_stack(w, s, stack);
    });
  }
  bool mmap(std::uint64_t time_ns, std::uint64_t addr, std::uint64_t size, std::uint32_t prot, std::uint32_t flags,
            std::uint32_t stack) {
    return record([&](ByteWriter& w, DeltaState& s) {
      tag(w, Tag::kMmap);
      put_time(w, s, time_ns);
      put_addr(w, s, addr);
      w.varint(size);
      w.varint(prot);
      w.varint(flags);
      put_stack(w, s, stack);
    });
  }
  bool munmap(std::uint64_t time_ns, std::uint64_t addr, std::uint64_t size) {
    return record([&](ByteWriter& w, DeltaState& s) {
      tag(w, Tag::kMunmap);
      put_time(w, s, time_ns);
      put_addr(w, s, addr);
      w.varint(size);
    });
  }
  bool mremap(std::uint64_t free_ns, std::uint64_t old_addr, std::uint64_t old_size, std::uint64_t alloc_ns,
              std::uint64_t new_addr, std::uint64_t new_size, std::uint32_t stack) {
    return record([&](ByteWriter& w, DeltaState& s) {
      tag(w, Tag::kMremap);
      put_time(w, s, free_ns);
      put_addr(w, s, old_addr);
      w.varint(old_size);
      w.varint(alloc_ns - free_ns);
      s.time_ns = alloc_ns;
      put_addr(w, s, new_addr);
      w.varint(new_size);
      put_stack(w, s, stack);
    });
  }
  // Frames are return addresses (the innermost is the allocator's caller),
  // each stored as a delta from the previous one. `previous`: the frames of
  // the frame's previous Stack record, if any; the outermost frames the two
  // share are then not repeated (kStackShared). A new stack usually differs
  // from the last one only inside: cc1plus's stack records took 2.4 MB, 2.0 MB
  // this way. A shared frame would take at least the byte its count takes, so
  // the record is never longer for sharing, and never longer than a reader's
  // input written again (tests/fuzz).
  bool stack(std::uint32_t id, std::uint64_t module_gen, std::uint8_t flags, std::span<const std::uint64_t> ips,
             std::span<const std::uint64_t> previous = {}) {
    std::size_t shared = 0;
    while (shared < ips.size() && shared < previous.size() &&
           ips[ips.size() - 1 - shared] == previous[previous.size() - 1 - shared]) {
      ++shared;
    }
    return record([&](ByteWriter& w, DeltaState&) {
      tag(w, Tag::kStack);
      w.varint(id);
      w.varint(module_gen);
      w.u8(shared != 0 ? flags | kStackShared : flags & ~kStackShared);
      w.varint(ips.size());
      if (shared != 0) w.varint(shared);
      std::uint64_t prev = 0;
      for (const std::uint64_t ip : ips.first(ips.size() - shared)) {
        w.varint(delta(prev, ip));
        prev = ip;
      }
    });
  }
  bool module_load(std::uint32_t id, std::uint64_t gen, std::string_view path, std::uint64_t bias,
                   std::span<const std::byte> build_id, std::span<const Segment> segments) {
    return record([&](ByteWriter& w, DeltaState&) {
      tag(w, Tag::kModuleLoad);
      w.varint(id);
      w.varint(gen);
      w.string(path);
      w.varint(bias);
      w.bytes(build_id);
      w.varint(segments.size());
      for (const Segment& seg : segments) {
        w.varint(seg.vaddr);
        w.varint(seg.memsz);
        w.varint(seg.file_offset);
        w.u8(seg.flags);
      }
    });
  }
  bool module_unload(std::uint32_t id, std::uint64_t gen) {
    return record([&](ByteWriter& w, DeltaState&) {
      tag(w, Tag::kModuleUnload);
      w.varint(id);
      w.varint(gen);
    });
  }
  bool thread_start(std::uint64_t tid, std::uint64_t time_ns, std::string_view name) {
    return record([&](ByteWriter& w, DeltaState& s) {
      tag(w, Tag::kThreadStart);
      w.varint(tid);
      put_time(w, s, time_ns);
      w.string(name);
    });
  }
  bool thread_name(std::uint64_t tid, std::string_view name) {
    return record([&](ByteWriter& w, DeltaState&) {
      tag(w, Tag::kThreadName);
      w.varint(tid);
      w.string(name);
    });
  }
  bool thread_exit(std::uint64_t tid, std::uint64_t time_ns) {
    return record([&](ByteWriter& w, DeltaState& s) {
      tag(w, Tag::kThreadExit);
      w.varint(tid);
      put_time(w, s, time_ns);
    });
  }
  bool rss(std::uint64_t time_ns, std::uint64_t rss_bytes) {
    return record([&](ByteWriter& w, DeltaState& s) {
      tag(w, Tag::kRss);
      put_time(w, s, time_ns);
      w.varint(rss_bytes);
    });
  }
  // The flag byte: bit 0 on, the source above it (version 7).
  bool recording(std::uint64_t time_ns, bool on, Source source = Source::kSignal) {
    return record([&](ByteWriter& w, DeltaState& s) {
      tag(w, Tag::kRecording);
      put_time(w, s, time_ns);
      w.u8(static_cast<std::uint8_t>((on ? 1 : 0) | static_cast<std::uint8_t>(source) << 1));
    });
  }
  bool marker(std::uint64_t time_ns, Source source, std::string_view label) {
    return record([&](ByteWriter& w, DeltaState& s) {
      tag(w, Tag::kMarker);
      put_time(w, s, time_ns);
      w.u8(static_cast<std::uint8_t>(source));
      w.string(label);
    });
  }
  bool counters(std::span<const CounterValue> values) {
    return record([&](ByteWriter& w, DeltaState&) {
      tag(w, Tag::kCounters);
      w.varint(values.size());
      for (const CounterValue& c : values) {
        w.varint(static_cast<std::uint8_t>(c.key));
        w.varint(c.value);
      }
    });
  }
  bool end(std::uint64_t time_ns) {
    return record([&](ByteWriter& w, DeltaState& s) {
      tag(w, Tag::kEnd);
      put_time(w, s, time_ns);
    });
  }
  // error 0: the process is about to exec `path`; otherwise that exec failed
  // with this errno and the recording goes on.
  bool exec(std::uint64_t time_ns, std::uint32_t error, std::string_view path) {
    return record([&](ByteWriter& w, DeltaState& s) {
      tag(w, Tag::kExec);
      put_time(w, s, time_ns);
      w.varint(error);
      w.string(path);
    });
  }

 private:
  // Alloc and Free are written without a bounds check per byte when this
  // much room is left: a tag and four varints.
  static constexpr std::size_t kMaxFastRecord = 1 + 4 * kMaxVarintBytes;

  template <typename Fn>
  bool record(Fn&& fn) {
    const std::size_t start = w_.size();
    DeltaState next = state_;
    fn(w_, next);
    if (!w_.ok()) {
      w_.rewind(start);
      return false;
    }
    state_ = next;
    return true;
  }
  static void tag(ByteWriter& w, Tag t) { w.u8(static_cast<std::uint8_t>(t)); }
  static void put_time(ByteWriter& w, DeltaState& s, std::uint64_t t) {
    w.varint(delta(s.time_ns, t));
    s.time_ns = t;
  }
  static void put_addr(ByteWriter& w, DeltaState& s, std::uint64_t a) {
    w.varint(delta(s.addr, a));
    s.addr = a;
  }
  static void put_stack(ByteWriter& w, DeltaState& s, std::uint64_t id) {
    w.varint(delta(s.stack, id));
    s.stack = id;
  }

  ByteWriter w_;
  DeltaState state_;
};

}  // namespace memrec::format
