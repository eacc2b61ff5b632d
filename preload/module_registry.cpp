// The module registry (see module_registry.h), filled from dl_iterate_phdr.
#include "module_registry.h"

#include <elf.h>
#include <link.h>
#include <sched.h>
#include <unistd.h>
#include <climits>
#include <cstring>

#include "os.h"

namespace memrec::preload {
namespace {

constexpr std::uint32_t kMaxModules = 8192;

Module* g_modules = nullptr;
std::atomic<std::uint32_t> g_count{0};
std::atomic<std::uint64_t> g_gen{0};
// The loader's counters of objects added and removed, at our last snapshot.
std::atomic<std::uint64_t> g_adds{~0ull};
std::atomic<std::uint64_t> g_subs{~0ull};
std::atomic_flag g_lock = ATOMIC_FLAG_INIT;

struct Counts {
  std::uint64_t adds = 0;
  std::uint64_t subs = 0;
};

int read_counts(dl_phdr_info* info, std::size_t size, void* data) {
  auto* c = static_cast<Counts*>(data);
  if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
    c->adds = info->dlpi_adds;
    c->subs = info->dlpi_subs;
  }
  return 1;  // the counters are the same in every call: one is enough
}

void copy_build_id(Module& m, const dl_phdr_info& info) {
  m.build_id_size = 0;
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info.dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    auto p = static_cast<std::uintptr_t>(info.dlpi_addr + ph.p_vaddr);
    const std::uintptr_t end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
      const std::uintptr_t name = p + sizeof(ElfW(Nhdr));
      const std::uintptr_t desc = name + ((note->n_namesz + 3) & ~3u);
      const std::uintptr_t next = desc + ((note->n_descsz + 3) & ~3u);
      if (next > end) break;
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
          std::memcmp(reinterpret_cast<const void*>(name), "GNU", 4) == 0 && note->n_descsz <= sizeof(m.build_id)) {
        std::memcpy(m.build_id, reinterpret_cast<const void*>(desc), note->n_descsz);
        m.build_id_size = static_cast<std::uint8_t>(note->n_descsz);
        return;
      }
      p = next;
    }
  }
}

void fill(Module& m, const dl_phdr_info& info, bool first) {
  m.bias = info.dlpi_addr;
  m.phdr = info.dlpi_phdr;
  m.segment_count = 0;
  for (int i = 0; i < info.dlpi_phnum && m.segment_count < kMaxModuleSegments; ++i) {
    const ElfW(Phdr)& ph = info.dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    format::Segment& s = m.segments[m.segment_count++];
    s.vaddr = ph.p_vaddr;
    s.memsz = ph.p_memsz;
    s.file_offset = ph.p_offset;
    s.flags = static_cast<std::uint8_t>(((ph.p_flags & PF_X) ? format::kSegmentExec : 0) |
                                        ((ph.p_flags & PF_W) ? format::kSegmentWrite : 0) |
                                        ((ph.p_flags & PF_R) ? format::kSegmentRead : 0));
  }
  copy_build_id(m, info);
  const char* name = info.dlpi_name != nullptr ? info.dlpi_name : "";
  if (first && name[0] == '\0') {
    // The main program has no name in the loader's list.
    const ssize_t n = readlink("/proc/self/exe", m.path, sizeof(m.path) - 1);
    m.path_size = n > 0 ? static_cast<std::uint32_t>(n) : 0;
  } else {
    const std::size_t n = strnlen(name, sizeof(m.path) - 1);
    std::memcpy(m.path, name, n);
    m.path_size = static_cast<std::uint32_t>(n);
  }
  m.path[m.path_size] = '\0';
}

struct Snapshot {
  std::uint64_t next_gen;
  bool first = true;
};

int snapshot_one(dl_phdr_info* info, std::size_t, void* data) {
  auto* snap = static_cast<Snapshot*>(data);
  const bool first = snap->first;
  snap->first = false;
  const std::uint32_t n = g_count.load(std::memory_order_relaxed);
  for (std::uint32_t i = 0; i < n; ++i) {
    Module& m = g_modules[i];
    if (m.unload_gen.load(std::memory_order_relaxed) == 0 && m.bias == info->dlpi_addr && m.phdr == info->dlpi_phdr) {
      m.seen = true;
      return 0;
    }
  }
  if (n >= kMaxModules) return 0;
  Module& m = g_modules[n];
  fill(m, *info, first);
  m.id = n + 1;
  m.load_gen = snap->next_gen;
  m.unload_gen.store(0, std::memory_order_relaxed);
  m.seen = true;
  m.load_written = false;
  m.unload_written = false;
  // Release: the writer that reads the count sees the entry complete.
  g_count.store(n + 1, std::memory_order_release);
  return 0;
}

void lock() {
  while (g_lock.test_and_set(std::memory_order_acquire)) sched_yield();
}
void unlock() { g_lock.clear(std::memory_order_release); }

}  // namespace

bool modules_init() {
  if (g_modules == nullptr) {
    g_modules = static_cast<Module*>(os::map(sizeof(Module) * kMaxModules, /*noreserve=*/true));
  }
  if (g_modules == nullptr) return false;
  refresh_modules();
  return true;
}

std::uint64_t refresh_modules() {
  if (g_modules == nullptr) return 0;
  Counts now;
  dl_iterate_phdr(read_counts, &now);
  if (now.adds == g_adds.load(std::memory_order_acquire) && now.subs == g_subs.load(std::memory_order_acquire)) {
    return g_gen.load(std::memory_order_acquire);
  }
  lock();
  if (now.adds != g_adds.load(std::memory_order_relaxed) || now.subs != g_subs.load(std::memory_order_relaxed)) {
    const std::uint64_t next = g_gen.load(std::memory_order_relaxed) + 1;
    const std::uint32_t before = g_count.load(std::memory_order_relaxed);
    for (std::uint32_t i = 0; i < before; ++i) g_modules[i].seen = false;
    Snapshot snap{next};
    // Read the counters again under the loader's lock, in the same walk.
    dl_iterate_phdr(read_counts, &now);
    dl_iterate_phdr(snapshot_one, &snap);
    for (std::uint32_t i = 0; i < before; ++i) {
      Module& m = g_modules[i];
      if (!m.seen && m.unload_gen.load(std::memory_order_relaxed) == 0) {
        m.unload_gen.store(next, std::memory_order_release);
      }
    }
    g_gen.store(next, std::memory_order_release);
    g_adds.store(now.adds, std::memory_order_release);
    g_subs.store(now.subs, std::memory_order_release);
  }
  const std::uint64_t gen = g_gen.load(std::memory_order_relaxed);
  unlock();
  return gen;
}

std::uint32_t module_count() { return g_count.load(std::memory_order_acquire); }
Module& module_at(std::uint32_t i) { return g_modules[i]; }

void modules_mark_unwritten() {
  const std::uint32_t n = module_count();
  for (std::uint32_t i = 0; i < n; ++i) {
    g_modules[i].load_written = false;
    g_modules[i].unload_written = false;
  }
}

void modules_lock() { lock(); }
void modules_unlock() { unlock(); }

}  // namespace memrec::preload
