// Symbolizer throughput: addresses per second over the functions of the ELF
// files named on the command line, cold (first lookups) and cached, on one
// worker and on every hardware thread. Run: meson test --benchmark, or
// symbolizer_benchmark FILE... [--count N] [--threads N].
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
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

// Wall time, and the CPU time of all the process's threads: on a busy
// machine the second is the one that says what the work costs.
struct Clock {
  std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
  double cpu = cpu_seconds();

  static double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  }
  std::string since(std::size_t n) const {
    const double w = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
    const double c = cpu_seconds() - cpu;
    char out[128];
    std::snprintf(out, sizeof out, "%.3f s wall (%.0f/s), %.3f s cpu (%.0f/s)", w, n / w, c, n / c);
    return out;
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::size_t count = 100000;
  unsigned only_threads = 0;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--count") == 0 && i + 1 < argc) {
      count = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      only_threads = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
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
    const std::vector<unsigned> runs =
        only_threads != 0 ? std::vector<unsigned>{only_threads} : std::vector<unsigned>{1u, hardware};
    for (const unsigned threads : runs) {
      Symbolizer symbolizer({{}, threads});
      const Clock cold_clock;
      const auto cold = symbolizer.symbolize(module, ips);
      const std::string cold_time = cold_clock.since(ips.size());
      const Clock warm_clock;
      const auto warm = symbolizer.symbolize(module, ips);
      const std::string warm_time = warm_clock.since(ips.size());
      std::size_t named = 0, with_line = 0, inlined = 0, frames = 0, name_bytes = 0;
      for (const Symbol& s : warm) {
        named += !s.frames.back().function.empty();
        with_line += s.frames.front().line != 0;
        inlined += s.frames.size() > 1;
        frames += s.frames.size();
        for (const SourceFrame& f : s.frames) name_bytes += f.function.size();
      }
      std::printf(
          "%s, %zu addresses, %u thread(s)\n  cold:   %s\n  cached: %s\n  %zu named, %zu with a line, %zu "
          "with inline frames, %zu frames, %zu bytes of names\n",
          file.c_str(), ips.size(), threads, cold_time.c_str(), warm_time.c_str(), named, with_line, inlined, frames,
          name_bytes);
    }
  }
  return 0;
}
