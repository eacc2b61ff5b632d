// The start-up check of whose malloc the program calls (see malloc_owner.h).
// Cold: runs in the constructor, under HookScope, so dlsym's and dladdr's
// own allocations pass through.
#include "malloc_owner.h"

#include <dlfcn.h>
#include <link.h>
#include <atomic>
#include <cstring>

#include "log.h"

namespace memrec::preload {
namespace {

std::atomic<std::uint64_t> g_foreign{0};

// strrchr, not string_view::substr, whose range check would import
// libstdc++'s throw.
const char* base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash == nullptr ? path : slash + 1;
}

// The first object after `from` in load order (the global scope's order for
// the objects loaded at start) that defines `malloc` itself, or null.
link_map* first_definer_after(link_map* from) {
  for (link_map* m = from->l_next; m != nullptr; m = m->l_next) {
    if (m->l_name == nullptr || m->l_name[0] == '\0') continue;
    void* handle = dlopen(m->l_name, RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    void* symbol = dlsym(handle, "malloc");
    dlclose(handle);
    Dl_info info{};
    link_map* owner = nullptr;
    if (symbol != nullptr && dladdr1(symbol, &info, reinterpret_cast<void**>(&owner), RTLD_DL_LINKMAP) != 0 &&
        owner == m) {
      return m;
    }
  }
  return nullptr;
}

// Whether `address`, found in the executable, is only its PLT entry for an
// undefined malloc: a non-PIC executable that takes malloc's address (python3
// does) makes that entry the canonical address, so dlsym returns it, while
// its calls still go to the first definition in the scope.
bool is_undefined_in_executable(void* address) {
  Dl_info info{};
  void* entry = nullptr;
  if (dladdr1(address, &info, &entry, RTLD_DL_SYMENT) == 0 || entry == nullptr) return false;
  return static_cast<const ElfW(Sym)*>(entry)->st_shndx == SHN_UNDEF;
}

}  // namespace

void check_malloc_owner() {
  // RTLD_DEFAULT searches the global scope in the order the program's own
  // references bind: the executable, then LD_PRELOAD in order, then the
  // libraries it needs. Compared by object, not by address: `&malloc` here
  // would itself bind to whichever malloc comes first.
  void* theirs = dlsym(RTLD_DEFAULT, "malloc");
  Dl_info info{};
  link_map* found = nullptr;
  link_map* mine = nullptr;
  if (theirs == nullptr || dladdr1(theirs, &info, reinterpret_cast<void**>(&found), RTLD_DL_LINKMAP) == 0 ||
      dladdr1(reinterpret_cast<void*>(&check_malloc_owner), &info, reinterpret_cast<void**>(&mine), RTLD_DL_LINKMAP) ==
          0 ||
      found == mine) {
    return;
  }
  if ((found->l_name == nullptr || found->l_name[0] == '\0') && is_undefined_in_executable(theirs)) {
    found = first_definer_after(found);
    if (found == nullptr || found == mine) return;
    theirs = dlsym(RTLD_NEXT, "malloc");  // only a non-zero mark for the dump; the name is what is reported
  }
  g_foreign.store(reinterpret_cast<std::uintptr_t>(theirs), std::memory_order_relaxed);
  // The executable's map has an empty name (dladdr's dli_fname is argv[0] then).
  if (found->l_name == nullptr || found->l_name[0] == '\0') {
    log_line({"the program's malloc is its own (in its executable), not memrec's: its allocations are not recorded"});
  } else {
    log_line({"the program's malloc is ", base_name(found->l_name),
              "'s, not memrec's: its allocations are not recorded; put libmemrec.so first in LD_PRELOAD"});
  }
}

std::uint64_t foreign_malloc() { return g_foreign.load(std::memory_order_relaxed); }

}  // namespace memrec::preload
