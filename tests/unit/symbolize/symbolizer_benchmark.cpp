// Symbolizer throughput: addresses per second over the functions of the ELF
// files named on the command line, cold (first lookups) and cached, on one
// worker and on every hardware thread. Run: meson test --benchmark, or
// symbolizer_benchmark FILE... [--count N].
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "symbolize/elf_file.h"
#include "symbolize/symbolizer.h"

using namespace memrec::analyzer;

namespace {

constexpr std::uint64_t kBias = 0x7f1200000000;

// Return addresses spread over every sized function symbol (.symtab, else
// .dynsym): up to `per_function` per function, as deep stacks would hit them.
std::vector<std::uint64_t> function_addresses(const std::string& path, std::size_t count) {
  std::vector<std::uint64_t> starts, sizes;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  Elf* elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, nullptr) : nullptr;
  for (const Elf64_Word wanted : {SHT_SYMTAB, SHT_DYNSYM}) {
    for (Elf_Scn* scn = elf ? elf_nextscn(elf, nullptr) : nullptr; scn != nullptr; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr shdr;
      if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != wanted || shdr.sh_entsize == 0) continue;
      Elf_Data* data = elf_getdata(scn, nullptr);
      for (std::size_t i = 0; data != nullptr && i < shdr.sh_size / shdr.sh_entsize; ++i) {
        GElf_Sym sym;
        if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
        if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_size < 2 || sym.st_shndx == SHN_UNDEF) continue;
        starts.push_back(sym.st_value);
        sizes.push_back(sym.st_size);
      }
    }
    if (!starts.empty()) break;
  }
  if (elf != nullptr) elf_end(elf);
  if (fd >= 0) close(fd);
  std::vector<std::uint64_t> ips;
  if (starts.empty()) return ips;
  const std::size_t per_function = std::max<std::size_t>(1, (count + starts.size() - 1) / starts.size());
  for (std::size_t f = 0; f < starts.size() && ips.size() < count; ++f) {
    for (std::size_t k = 0; k < per_function && ips.size() < count; ++k) {
      // +1: a return address; the symbolizer looks up the byte before it.
      ips.push_back(kBias + starts[f] + 1 + sizes[f] * k / per_function);
    }
  }
  return ips;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t count = 100000;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--count") == 0 && i + 1 < argc) {
      count = std::strtoull(argv[++i], nullptr, 10);
    } else {
      files.emplace_back(argv[i]);
    }
  }
  elf_version(EV_CURRENT);
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  for (const std::string& file : files) {
    auto elf = ElfFile::open(file);
    if (!elf) {
      std::fprintf(stderr, "%s\n", elf.error().message.c_str());
      return 1;
    }
    const SymbolizeModule module{file, elf->build_id(), kBias, elf->load_segments()};
    const std::vector<std::uint64_t> ips = function_addresses(file, count);
    for (const unsigned threads : {1u, hardware}) {
      Symbolizer symbolizer({{}, threads});
      auto start = std::chrono::steady_clock::now();
      const auto cold = symbolizer.symbolize(module, ips);
      const double cold_s = seconds_since(start);
      start = std::chrono::steady_clock::now();
      const auto warm = symbolizer.symbolize(module, ips);
      const double warm_s = seconds_since(start);
      std::size_t named = 0, with_line = 0, inlined = 0;
      for (const Symbol& s : cold) {
        named += !s.frames.back().function.empty();
        with_line += s.frames.front().line != 0;
        inlined += s.frames.size() > 1;
      }
      std::printf("%s: %zu addresses, %u thread(s): cold %.3f s (%.0f/s), cached %.3f s (%.0f/s); %zu named, %zu "
                  "with a line, %zu with inline frames\n",
                  file.c_str(), ips.size(), threads, cold_s, ips.size() / cold_s, warm_s, ips.size() / warm_s, named,
                  with_line, inlined);
      (void)warm;
    }
  }
  return 0;
}
