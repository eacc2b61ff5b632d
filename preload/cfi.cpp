// A small reader of x86-64 DWARF call-frame information (see cfi.h): finds
// the FDE of a code address through .eh_frame_hdr's sorted table, then runs
// the CIE's and FDE's CFA programs up to that address, keeping only the rules
// of rsp (the CFA), rbp and the return address. The format is the one of the
// LSB's "Exception Frames" chapter and DWARF 4 section 6.4; gcc and clang
// emit nothing else for ordinary code. Everything unusual answers kComplex.
#include "cfi.h"

#include <link.h>
#include <atomic>
#include <cstring>

namespace memrec::preload {
namespace {

#if defined(__x86_64__)

constexpr unsigned kRegRbp = 6;
constexpr unsigned kRegRsp = 7;
constexpr unsigned kRegRa = 16;

std::atomic<std::uint64_t> g_subs{0};

// A cursor over mapped CFI bytes. The sections are part of a loaded module,
// read as the loader mapped them.
struct Cursor {
  const std::uint8_t* p;
  const std::uint8_t* end;
  bool ok = true;

  bool more() const { return ok && p < end; }
  std::uint8_t u8() {
    if (p >= end) {
      ok = false;
      return 0;
    }
    return *p++;
  }
  template <typename T>
  T fixed() {
    if (end - p < static_cast<std::ptrdiff_t>(sizeof(T))) {
      ok = false;
      return T{};
    }
    T v;
    std::memcpy(&v, p, sizeof(T));
    p += sizeof(T);
    return v;
  }
  std::uint64_t uleb() {
    std::uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      const std::uint8_t b = u8();
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    ok = false;
    return v;
  }
  std::int64_t sleb() {
    std::int64_t v = 0;
    unsigned shift = 0;
    std::uint8_t b;
    do {
      b = u8();
      v |= static_cast<std::int64_t>(b & 0x7f) << shift;
      shift += 7;
    } while ((b & 0x80) != 0 && shift < 64 && ok);
    if (shift < 64 && (b & 0x40) != 0) v |= -(static_cast<std::int64_t>(1) << shift);
    return v;
  }
  // A DW_EH_PE-encoded pointer. `data_base` is .eh_frame_hdr for datarel.
  std::uint64_t encoded(std::uint8_t enc, std::uintptr_t data_base = 0) {
    if (enc == 0xff) return 0;  // DW_EH_PE_omit
    const std::uintptr_t here = reinterpret_cast<std::uintptr_t>(p);
    std::uint64_t v = 0;
    switch (enc & 0x0f) {
      case 0x00:
        v = fixed<std::uint64_t>();
        break;
      case 0x01:
        v = uleb();
        break;
      case 0x02:
        v = fixed<std::uint16_t>();
        break;
      case 0x03:
        v = fixed<std::uint32_t>();
        break;
      case 0x04:
        v = fixed<std::uint64_t>();
        break;
      case 0x09:
        v = static_cast<std::uint64_t>(sleb());
        break;
      case 0x0a:
        v = static_cast<std::uint64_t>(static_cast<std::int64_t>(fixed<std::int16_t>()));
        break;
      case 0x0b:
        v = static_cast<std::uint64_t>(static_cast<std::int64_t>(fixed<std::int32_t>()));
        break;
      case 0x0c:
        v = fixed<std::uint64_t>();
        break;
      default:
        ok = false;
        return 0;
    }
    switch (enc & 0x70) {
      case 0x00:
        break;
      case 0x10:
        v += here;
        break;  // pcrel
      case 0x30:
        v += data_base;
        break;  // datarel
      default:
        ok = false;
        return 0;  // textrel, funcrel, aligned: not used on x86-64
    }
    if ((enc & 0x80) != 0) ok = false;  // indirect: only for personality pointers, which we skip by length
    return v;
  }
};

UnwindRule rule_in(const std::uint8_t* hdr, std::uintptr_t pc);

struct Found {
  std::uintptr_t pc;
  const std::uint8_t* hdr = nullptr;
  UnwindRule rule{};
};

int find_hdr(dl_phdr_info* info, std::size_t size, void* data) {
  auto* f = static_cast<Found*>(data);
  if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
    g_subs.store(info->dlpi_subs, std::memory_order_relaxed);
  }
  bool hit = false;
  const std::uint8_t* hdr = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const std::uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && f->pc >= lo && f->pc < lo + ph.p_memsz) hit = true;
    if (ph.p_type == PT_GNU_EH_FRAME) hdr = reinterpret_cast<const std::uint8_t*>(lo);
  }
  if (!hit) return 0;
  f->hdr = hdr;
  if (hdr != nullptr) f->rule = rule_in(hdr, f->pc);
  return 1;
}

// The FDE covering `pc` through .eh_frame_hdr's binary-search table, or null.
const std::uint8_t* find_fde(const std::uint8_t* hdr, std::uintptr_t pc) {
  if (hdr[0] != 1) return nullptr;
  const std::uint8_t ptr_enc = hdr[1];
  const std::uint8_t count_enc = hdr[2];
  const std::uint8_t table_enc = hdr[3];
  // DW_EH_PE_datarel | DW_EH_PE_sdata4: what every linker writes.
  if (table_enc != 0x3b) return nullptr;
  const auto base = reinterpret_cast<std::uintptr_t>(hdr);
  Cursor c{hdr + 4, hdr + 4 + 32};
  c.encoded(ptr_enc, base);
  const std::uint64_t count = c.encoded(count_enc, base);
  if (!c.ok || count == 0) return nullptr;
  const std::uint8_t* table = c.p;
  auto entry = [&](std::uint64_t i, int field) {
    std::int32_t v;
    std::memcpy(&v, table + i * 8 + static_cast<unsigned>(field) * 4, 4);
    return base + static_cast<std::uintptr_t>(static_cast<std::intptr_t>(v));
  };
  if (pc < entry(0, 0)) return nullptr;
  std::uint64_t lo = 0;
  std::uint64_t hi = count;  // invariant: entry(lo) <= pc < entry(hi)
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (entry(mid, 0) <= pc) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return reinterpret_cast<const std::uint8_t*>(entry(lo, 1));
}

enum class Reg : std::uint8_t { kUndefined, kSame, kOffset, kOther };

struct RegRule {
  Reg how = Reg::kSame;
  std::int64_t off = 0;
};

struct Row {
  unsigned cfa_reg = kRegRsp;
  std::int64_t cfa_off = 0;
  bool cfa_complex = false;
  RegRule rbp;
  RegRule ra{Reg::kUndefined, 0};
};

struct Cie {
  std::uint64_t code_align = 1;
  std::int64_t data_align = 1;
  std::uint64_t ra_reg = kRegRa;
  std::uint8_t fde_enc = 0;
  bool has_z = false;
  bool signal = false;
  const std::uint8_t* insns = nullptr;
  const std::uint8_t* insns_end = nullptr;
};

bool parse_cie(const std::uint8_t* p, Cie& cie) {
  std::uint32_t len;
  std::memcpy(&len, p, 4);
  if (len == 0 || len == 0xffffffffu) return false;
  Cursor c{p + 4, p + 4 + len};
  if (c.fixed<std::uint32_t>() != 0) return false;  // a CIE's id is 0 in .eh_frame
  const std::uint8_t version = c.u8();
  const char* aug = reinterpret_cast<const char*>(c.p);
  const std::size_t aug_len = strnlen(aug, static_cast<std::size_t>(c.end - c.p));
  c.p += aug_len + 1;
  cie.code_align = c.uleb();
  cie.data_align = c.sleb();
  cie.ra_reg = version == 1 ? c.u8() : c.uleb();
  const std::uint8_t* aug_end = nullptr;
  for (std::size_t i = 0; i < aug_len && c.ok; ++i) {
    switch (aug[i]) {
      case 'z': {
        if (i != 0) return false;
        cie.has_z = true;
        const std::uint64_t n = c.uleb();
        aug_end = c.p + n;
        break;
      }
      case 'R':
        cie.fde_enc = c.u8();
        break;
      case 'L':
        c.u8();
        break;
      case 'P': {
        const std::uint8_t enc = c.u8();
        c.encoded(static_cast<std::uint8_t>(enc & 0x7f));  // the personality pointer, skipped
        break;
      }
      case 'S':
        cie.signal = true;
        break;
      case 'B':
        break;
      default:
        return false;
    }
  }
  if (!c.ok || !cie.has_z || aug_end == nullptr || aug_end > c.end) return false;
  cie.insns = aug_end;
  cie.insns_end = c.end;
  return true;
}

struct Machine {
  Row row;
  Row initial;
  Row saved[8];
  int saved_count = 0;
  const Cie* cie = nullptr;
  bool ok = true;

  RegRule* rule_of(std::uint64_t reg) {
    if (reg == kRegRbp) return &row.rbp;
    if (reg == cie->ra_reg) return &row.ra;
    return nullptr;  // other registers do not matter to us
  }
  void set(std::uint64_t reg, Reg how, std::int64_t off = 0) {
    if (reg == kRegRsp && how != Reg::kSame && how != Reg::kUndefined) ok = false;
    if (RegRule* r = rule_of(reg)) *r = RegRule{how, off};
  }
  void restore(std::uint64_t reg) {
    if (reg == kRegRbp) row.rbp = initial.rbp;
    if (reg == cie->ra_reg) row.ra = initial.ra;
  }

  // Runs the program in [p, end) from `loc` while the location stays <= target.
  void run(const std::uint8_t* p, const std::uint8_t* end, std::uintptr_t loc, std::uintptr_t target) {
    Cursor c{p, end};
    while (c.more() && ok) {
      const std::uint8_t op = c.u8();
      const std::uint8_t low = op & 0x3f;
      std::uint64_t advance = 0;
      switch (op & 0xc0) {
        case 0x40:
          advance = low;
          break;
        case 0x80:
          set(low, Reg::kOffset, static_cast<std::int64_t>(c.uleb()) * cie->data_align);
          continue;
        case 0xc0:
          restore(low);
          continue;
        default:
          break;
      }
      if ((op & 0xc0) == 0) {
        switch (op) {
          case 0x00:
            continue;
          case 0x01: {
            const std::uintptr_t next = c.encoded(cie->fde_enc);
            if (next > target) return;
            loc = next;
            continue;
          }
          case 0x02:
            advance = c.u8();
            break;
          case 0x03:
            advance = c.fixed<std::uint16_t>();
            break;
          case 0x04:
            advance = c.fixed<std::uint32_t>();
            break;
          case 0x05: {
            const std::uint64_t reg = c.uleb();
            set(reg, Reg::kOffset, static_cast<std::int64_t>(c.uleb()) * cie->data_align);
            continue;
          }
          case 0x06:
            restore(c.uleb());
            continue;
          case 0x07:
            set(c.uleb(), Reg::kUndefined);
            continue;
          case 0x08:
            set(c.uleb(), Reg::kSame);
            continue;
          case 0x09: {
            const std::uint64_t reg = c.uleb();
            c.uleb();
            set(reg, Reg::kOther);
            continue;
          }
          case 0x0a:
            if (saved_count == 8) {
              ok = false;
              return;
            }
            saved[saved_count++] = row;
            continue;
          case 0x0b:
            if (saved_count == 0) {
              ok = false;
              return;
            }
            row = saved[--saved_count];
            continue;
          case 0x0c:
            row.cfa_reg = static_cast<unsigned>(c.uleb());
            row.cfa_off = static_cast<std::int64_t>(c.uleb());
            row.cfa_complex = false;
            continue;
          case 0x0d:
            row.cfa_reg = static_cast<unsigned>(c.uleb());
            continue;
          case 0x0e:
            row.cfa_off = static_cast<std::int64_t>(c.uleb());
            continue;
          case 0x0f:
            c.p += c.uleb();
            row.cfa_complex = true;
            continue;
          case 0x10:
          case 0x16: {
            const std::uint64_t reg = c.uleb();
            c.p += c.uleb();
            set(reg, Reg::kOther);
            continue;
          }
          case 0x11: {
            const std::uint64_t reg = c.uleb();
            set(reg, Reg::kOffset, c.sleb() * cie->data_align);
            continue;
          }
          case 0x12:
            row.cfa_reg = static_cast<unsigned>(c.uleb());
            row.cfa_off = c.sleb() * cie->data_align;
            row.cfa_complex = false;
            continue;
          case 0x13:
            row.cfa_off = c.sleb() * cie->data_align;
            continue;
          case 0x14:
          case 0x15: {
            const std::uint64_t reg = c.uleb();
            c.uleb();
            set(reg, Reg::kOther);
            continue;
          }
          case 0x2e:
            c.uleb();
            continue;   // DW_CFA_GNU_args_size
          case 0x2f: {  // DW_CFA_GNU_negative_offset_extended
            const std::uint64_t reg = c.uleb();
            set(reg, Reg::kOffset, -static_cast<std::int64_t>(c.uleb()) * cie->data_align);
            continue;
          }
          default:
            ok = false;
            return;
        }
      }
      loc += advance * cie->code_align;
      if (loc > target) return;
    }
    if (!c.ok) ok = false;
  }
};

UnwindRule rule_from(const Row& row) {
  UnwindRule r{};
  r.kind = RuleKind::kComplex;
  if (row.ra.how == Reg::kUndefined) {
    r.kind = RuleKind::kEnd;
    return r;
  }
  if (row.cfa_complex || row.ra.how != Reg::kOffset) return r;
  if (row.rbp.how == Reg::kOther) return r;
  if (row.cfa_reg != kRegRsp && row.cfa_reg != kRegRbp) return r;
  const std::int64_t rbp_off = row.rbp.how == Reg::kOffset ? row.rbp.off : 0;
  if (row.cfa_off < INT32_MIN || row.cfa_off > INT32_MAX || row.ra.off % 8 != 0 || row.ra.off < -1024 ||
      row.ra.off > 1016 || rbp_off < INT16_MIN || rbp_off > INT16_MAX ||
      (row.rbp.how == Reg::kOffset && rbp_off == 0)) {
    return r;
  }
  r.cfa_off = static_cast<std::int32_t>(row.cfa_off);
  r.ra_off8 = static_cast<std::int8_t>(row.ra.off / 8);
  r.rbp_off = static_cast<std::int16_t>(rbp_off);
  r.kind = row.cfa_reg == kRegRsp ? RuleKind::kRsp : RuleKind::kRbp;
  return r;
}

// The rule at `pc` from the module whose .eh_frame_hdr is `hdr`.
UnwindRule rule_in(const std::uint8_t* hdr, std::uintptr_t pc) {
  UnwindRule complex{};
  complex.kind = RuleKind::kComplex;
  const std::uint8_t* fde = find_fde(hdr, pc);
  if (fde == nullptr) return complex;
  std::uint32_t len;
  std::memcpy(&len, fde, 4);
  if (len == 0 || len == 0xffffffffu) return complex;
  std::int32_t cie_ptr;
  std::memcpy(&cie_ptr, fde + 4, 4);
  if (cie_ptr == 0) return complex;  // a CIE, not an FDE
  Cie cie;
  if (!parse_cie(fde + 4 - cie_ptr, cie) || cie.signal) return complex;
  Cursor c{fde + 8, fde + 4 + len};
  const std::uintptr_t begin = c.encoded(cie.fde_enc);
  const std::uintptr_t range = c.encoded(static_cast<std::uint8_t>(cie.fde_enc & 0x0f));
  if (!c.ok || pc < begin || pc - begin >= range) return complex;
  const std::uint8_t* insns = c.p + c.uleb();
  if (!c.ok || insns > c.end) return complex;
  Machine m;
  m.cie = &cie;
  m.run(cie.insns, cie.insns_end, 0, ~std::uintptr_t{0});
  if (!m.ok || m.saved_count != 0) return complex;
  m.initial = m.row;
  m.run(insns, c.end, begin, pc);
  if (!m.ok) return complex;
  return rule_from(m.row);
}

#endif  // __x86_64__

}  // namespace

std::uint64_t modules_unloaded() {
#if defined(__x86_64__)
  return g_subs.load(std::memory_order_relaxed);
#else
  return 0;
#endif
}

UnwindRule find_unwind_rule(std::uintptr_t pc) {
  UnwindRule complex{};
  complex.kind = RuleKind::kComplex;
#if defined(__x86_64__)
  Found f{pc};
  // The rule is read inside the callback, under the loader's lock, so the
  // module cannot be unloaded while we read its CFI.
  dl_iterate_phdr(find_hdr, &f);
  return f.hdr != nullptr ? f.rule : complex;
#else
  (void)pc;
  return complex;
#endif
}

}  // namespace memrec::preload
