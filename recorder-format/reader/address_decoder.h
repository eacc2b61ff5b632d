// The reader's side of a columns payload's address coding, for every layout
// (FORMAT.md, "Columns"): version 2's rings (kLayoutColumns), version 3's
// ages (kLayoutAgedColumns) and the ages with carved allocation misses of
// versions 4 and 5 (kLayoutCarvedColumns, kLayoutSplitColumns). Shared by the direct decode (column_decoder.cpp)
// and the join (frame_columns_join.cpp), so both read addresses alike.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memrec/format/address_ages.h"
#include "memrec/format/frame_columns.h"

namespace memrec::reader::detail {

class AddressDecoder {
 public:
  // A new frame of `layout` (kLayoutColumns to kLayoutSplitColumns).
  void reset(std::uint8_t layout) {
    aged_ = layout != format::kLayoutColumns;
    carved_ = layout == format::kLayoutCarvedColumns || layout == format::kLayoutSplitColumns;
    carve_at_.reset();
    rings_ = {};
    allocs_.clear();
    frees_.clear();
    for (const std::uint32_t c : used_classes_) by_class_[c].clear();
    used_classes_.clear();
    pending_class_ = 0;
  }

  // What a miss of `kind` is a delta from: the previous address, or for an
  // allocation in version 4 the carve point, once the frame has one.
  std::uint64_t miss_base(format::AddressKind kind) const {
    return carved_ && kind == format::AddressKind::kAlloc && carve_at_ ? *carve_at_ : rings_.previous;
  }
  // After a miss, before seen(): an allocation's moves the carve point.
  void missed(format::AddressKind kind, std::uint64_t addr, std::uint64_t size) {
    if (carved_ && kind == format::AddressKind::kAlloc) carve_at_ = addr + format::carve_step(size);
  }

  // The address an addr_k code of kFirstRingSlot (= kFirstAgeCode) or more
  // names, for an address of `kind` (an allocation's `size` picks its class).
  // False, with `why`, when it names nothing.
  // Inlined in the decoders' loops; its failures are cold calls.
  [[gnu::always_inline]] bool named(format::AddressKind kind, std::uint64_t k, std::uint64_t size, std::uint64_t& out,
                                    std::string& why) {
    if (!aged_) return named_in_ring(kind, k, out, why);
    const std::uint64_t n = k - format::kFirstAgeCode;
    if (kind == format::AddressKind::kFree) {
      if (n >= allocs_.size()) return fail(why, "a free names allocation {} back of {}", n, allocs_.size());
      const Allocated& a = allocs_[allocs_.size() - 1 - n];
      out = a.addr;
      pending_class_ = a.size_class;
      return true;
    }
    if (kind != format::AddressKind::kAlloc) return fail(why, "a mapping address names earlier address {}", n);
    if (n % 2 == 0) {
      const std::uint32_t cls = format::size_class(size);
      const std::vector<std::uint64_t>& list = by_class_[cls];
      if (cls == 0 || n / 2 >= list.size())
        return fail(why, "an allocation names free {} back of {} in size class {}", n / 2, list.size(), cls);
      out = list[list.size() - 1 - n / 2];
      return true;
    }
    if (n / 2 >= frees_.size()) return fail(why, "an allocation names free {} back of {}", n / 2, frees_.size());
    out = frees_[frees_.size() - 1 - n / 2];
    return true;
  }

  // After each address, named or a miss: it becomes `previous` and joins the
  // frame's lists.
  [[gnu::always_inline]] void seen(format::AddressKind kind, std::uint64_t addr, std::uint64_t size) {
    if (!aged_) {
      rings_.seen(kind, addr);
      return;
    }
    rings_.previous = addr;
    if (kind == format::AddressKind::kAlloc) {
      allocs_.push_back({addr, format::size_class(size)});
    } else if (kind == format::AddressKind::kFree) {
      frees_.push_back(addr);
      if (pending_class_ != 0) {
        std::vector<std::uint64_t>& list = by_class_[pending_class_];
        if (list.empty()) used_classes_.push_back(pending_class_);
        list.push_back(addr);
      }
    }
    pending_class_ = 0;
  }

 private:
  bool named_in_ring(format::AddressKind kind, std::uint64_t k, std::uint64_t& out, std::string& why) {
    format::AddressRing* ring = rings_.ring_for(kind);
    const std::uint64_t slot = k - format::kFirstRingSlot;
    if (ring == nullptr || slot >= ring->count)
      return fail(why, "an address names ring slot {} of {}", slot, ring == nullptr ? 0 : ring->count);
    out = ring->slots[slot];
    ring->remove(static_cast<std::uint32_t>(slot));
    return true;
  }
  template <typename... Args>
  [[gnu::cold, gnu::noinline]] static bool fail(std::string& why, fmt::format_string<Args...> f, Args&&... args) {
    why = fmt::format(f, std::forward<Args>(args)...);
    return false;
  }

  bool aged_ = false;
  bool carved_ = false;
  std::optional<std::uint64_t> carve_at_;  // version 4: after the frame's last allocation miss
  format::AddressCoderState rings_;        // version 2's rings; `previous` for both layouts
  struct Allocated {
    std::uint64_t addr;
    std::uint32_t size_class;
  };
  std::vector<Allocated> allocs_;
  std::vector<std::uint64_t> frees_;
  std::vector<std::vector<std::uint64_t>> by_class_ = std::vector<std::vector<std::uint64_t>>(format::kSizeClasses);
  std::vector<std::uint32_t> used_classes_;
  std::uint32_t pending_class_ = 0;  // the class of the block the last free named
};

// This thread's decoder, reset for a frame of `layout`: its lists keep their
// capacity from frame to frame.
inline AddressDecoder& address_decoder_for(std::uint8_t layout) {
  thread_local AddressDecoder decoder;
  decoder.reset(layout);
  return decoder;
}

}  // namespace memrec::reader::detail
