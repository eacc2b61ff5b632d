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
