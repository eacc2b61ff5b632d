// C++ allocation in every form (new, new[], nothrow, aligned, sized delete),
// 1000 thrown-and-caught exceptions and a std::bad_alloc from operator new.
// Built with libstdc++'s operator new, and linked against allocators whose
// own operator new does not call malloc (cpp_new_mimalloc, _jemalloc,
// _tcmalloc). `cpp_new raise`: a new and delete first, then SIGUSR1 to
// itself (under MEMREC_START_DISABLED=1, the preload tries the operators
// before recording starts). Leaks exactly:
//   leak_widgets 5 x 777 (new char[777]), leak_big_aligned 2 x 640
//   (new of an alignas(64) type), leak_nothrow 3 x 333 (nothrow new[]).
// Everything else is freed.
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#define NOINLINE __attribute__((noinline))

namespace {

char g_stdout_buffer[4096];  // see common.h: no stdio buffer from malloc
void* volatile g_sink[16];
unsigned g_sink_next = 0;
void keep(void* ptr) { g_sink[g_sink_next++ % 16] = ptr; }

struct alignas(64) Big {
  char bytes[640];
};
static_assert(sizeof(Big) == 640);

struct Node {
  std::uint64_t value[6];  // 48 bytes, so sized delete has something to say
};

bool aligned_to(const void* ptr, std::uintptr_t alignment) {
  return reinterpret_cast<std::uintptr_t>(ptr) % alignment == 0;
}

NOINLINE void leak_widgets() {
  for (int i = 0; i < 5; ++i) keep(new char[777]);
}

NOINLINE void leak_big_aligned() {
  for (int i = 0; i < 2; ++i) {
    Big* big = new Big;
    if (!aligned_to(big, 64)) std::printf("cpp_new: Big misaligned\n");
    keep(big);
  }
}

NOINLINE void leak_nothrow() {
  for (int i = 0; i < 3; ++i) keep(new (std::nothrow) char[333]);
}

NOINLINE void every_form_freed() {
  Node* node = new Node{};
  delete node;  // sized delete under -fsized-deallocation (C++14 and later)

  int* ints = new int[100];
  delete[] ints;

  Node* maybe = new (std::nothrow) Node{};
  delete maybe;
  char* maybe_array = new (std::nothrow) char[50];
  delete[] maybe_array;

  void* raw = ::operator new(48);
  ::operator delete(raw, 48);
  void* raw_nothrow = ::operator new(48, std::nothrow);
  ::operator delete(raw_nothrow, std::nothrow);

  void* aligned = ::operator new(256, std::align_val_t(64));
  if (!aligned_to(aligned, 64)) std::printf("cpp_new: aligned new misaligned\n");
  ::operator delete(aligned, 256, std::align_val_t(64));
  char* aligned_array = new (std::align_val_t(128)) char[512];
  if (!aligned_to(aligned_array, 128)) std::printf("cpp_new: aligned new[] misaligned\n");
  ::operator delete[](aligned_array, std::align_val_t(128));
  Big* big = new Big;
  delete big;
  Big* bigs = new Big[3];
  delete[] bigs;

  std::vector<std::string> strings;
  for (int i = 0; i < 200; ++i) strings.push_back("a string long enough to allocate #" + std::to_string(i));
}

NOINLINE int throw_and_catch() {
  int caught = 0;
  for (int i = 0; i < 1000; ++i) {
    try {
      throw std::runtime_error("boom number " + std::to_string(i) + " with a long enough message");
    } catch (const std::runtime_error& error) {
      caught += error.what()[0] == 'b' ? 1 : 0;
    }
  }
  return caught;
}

// Impossible requests (128 TiB, the whole user address space): the nothrow
// form returns null, and the throwing one calls the new-handler, whose
// std::bad_alloc unwinds through the preload's operator new. mimalloc's
// operator new aborts instead of calling a handler (Debian builds it as C),
// so cpp_new_mimalloc tries the nothrow form only.
#ifndef CPP_NEW_ABORTS_ON_FAILURE
[[noreturn]] void throw_bad_alloc() { throw std::bad_alloc(); }
#endif

NOINLINE bool huge_requests_fail() {
  constexpr std::size_t kHuge = std::size_t{1} << 47;
  void* nothing = ::operator new(kHuge, std::nothrow);
  keep(nothing);
  if (nothing != nullptr) return false;
#ifndef CPP_NEW_ABORTS_ON_FAILURE
  const std::new_handler previous = std::set_new_handler(throw_bad_alloc);
  bool thrown = false;
  try {
    keep(::operator new(kHuge));
  } catch (const std::bad_alloc&) {
    thrown = true;
  }
  std::set_new_handler(previous);
  if (!thrown) return false;
#endif
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, g_stdout_buffer, _IOLBF, sizeof g_stdout_buffer);
  if (argc > 1 && std::strcmp(argv[1], "raise") == 0) {
    delete new int(1);
    std::raise(SIGUSR1);
  }
  leak_widgets();
  leak_big_aligned();
  leak_nothrow();
  every_form_freed();
  const int caught = throw_and_catch();
  if (!huge_requests_fail()) {
    std::printf("cpp_new: operator new of 128 TiB did not fail\n");
    return 1;
  }
  std::printf("cpp_new: caught %d exceptions\n", caught);
  return caught == 1000 ? 0 : 1;
}
