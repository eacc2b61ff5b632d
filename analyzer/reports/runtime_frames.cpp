// glibc keeps some blocks until the process ends and frees them in no hook
// we see (its __libc_freeres is only run under valgrind/mtrace). A program
// that frees everything it allocated still shows them live at exit; the
// report lists them as `runtime_retained`, never as leaks. Names are glibc
// 2.36's (Debian 12); symbols without debug info come from .dynsym, so both
// the internal name and the exported one that contains it are listed;
// glibc's own `__GI_` alias prefix is ignored.
#include "reports/runtime_frames.h"

#include <algorithm>
#include <array>

#include "reports/call_sites.h"

namespace memrec::analyzer {
namespace {

constexpr std::array<std::string_view, 11> kRuntimeFunctions = {
    // ld.so: the DTV and static TLS block of a new thread, kept with the
    // cached stack for the next pthread_create (nptl/allocatestack.c).
    "_dl_allocate_tls",
    "_dl_allocate_tls_init",
    "allocate_dtv",
    // ld.so: a dynamic TLS block or a grown DTV for a dlopen()ed module's
    // thread-local variables, kept until the thread exits or forever.
    "_dl_update_slotinfo",
    "update_get_addr",
    "__tls_get_addr",
    "_dl_resize_dtv",
    // libc: a stdio stream's buffer, allocated on first use (libio/filedoalloc.c);
    // stdout's and stderr's are never freed.
    "_IO_file_doallocate",
    // libc: the per-thread dlerror() message buffer (dlfcn/dlerror.c).
    "_dlerror_run",
    "__libc_dlerror_result_free",
    // libc: the atexit handler blocks beyond the first 32 (stdlib/cxa_atexit.c).
    "__new_exitfn",
};

}  // namespace

// glibc's DWARF names its internal aliases `__GI_name` (include/libc-symbols.h,
// hidden_proto); the report compares the plain name.
std::string_view plain_name(std::string_view function) {
  constexpr std::string_view kHiddenAlias = "__GI_";
  if (function.starts_with(kHiddenAlias)) function.remove_prefix(kHiddenAlias.size());
  return function;
}

std::optional<std::string_view> runtime_function(std::span<const SiteFrame* const> innermost_first) {
  const std::size_t n = std::min(innermost_first.size(), kRuntimeFramesLooked);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string_view function = plain_name(innermost_first[i]->function);
    for (const std::string_view name : kRuntimeFunctions) {
      if (function == name) return name;
    }
  }
  return std::nullopt;
}

}  // namespace memrec::analyzer
