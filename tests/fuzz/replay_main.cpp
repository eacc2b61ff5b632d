// A main() for reader_fuzzer.cpp without libFuzzer: runs every file named on
// the command line (directories: every file in them) through the fuzz target
// once. meson builds it with the project's compiler to replay the corpus (and
// the fixed findings in it), so a reader change that breaks them fails without clang.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;

bool replay(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "reader_fuzzer_replay: %s: cannot open it\n", path.c_str());
    return false;
  }
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t inputs = 0;
  bool ok = true;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg(argv[i]);
    std::error_code error;
    if (fs::is_directory(arg, error)) {
      for (const auto& entry : fs::directory_iterator(arg)) {
        if (!entry.is_regular_file()) continue;
        ok = replay(entry.path()) && ok;
        ++inputs;
      }
    } else {
      ok = replay(arg) && ok;
      ++inputs;
    }
  }
  std::printf("reader_fuzzer_replay: %zu inputs replayed\n", inputs);
  if (inputs == 0) {
    std::fprintf(stderr, "reader_fuzzer_replay: no inputs: pass corpus files or directories\n");
    return 1;
  }
  return ok ? 0 : 1;
}
