// dlopen()ed with RTLD_GLOBAL by dlclose_allocator, a C program: linked
// against mimalloc, whose operator new the preload's then forwards to.
// Unlike libtest_cxx.so it uses no std:: template, whose unique symbols would
// keep it loaded, so dlclose() unloads it and mimalloc with it, unless the
// preload pinned mimalloc. lib_leak() leaks 2 x new char[2222] from
// cxx_lib_leak and deletes one int.
#define NOINLINE __attribute__((noinline))

namespace {

char* volatile g_keep[2];

NOINLINE void cxx_lib_leak() {
  for (auto& slot : g_keep) slot = new char[2222];
}

}  // namespace

extern "C" void lib_leak() {
  cxx_lib_leak();
  delete new int(7);
}
