// The start-up check of whose malloc the program calls (see malloc_owner.h).
// Cold: runs in the constructor, under HookScope, so dlsym's and dladdr's
// own allocations pass through.
#include "malloc_owner.h"

#include <dlfcn.h>
#include <link.h>
#include <atomic>
#include <string_view>

#include "log.h"

namespace memrec::preload {
namespace {

std::atomic<std::uint64_t> g_foreign{0};

std::string_view base_name(const char* path) {
  const std::string_view p(path);
  const std::size_t slash = p.rfind('/');
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
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
