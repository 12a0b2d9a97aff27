// Runs the fuzz target's entry point over files and directories given on the command line, so
// every build (GCC, sanitizers, qemu) exercises the loader on the fuzz corpus.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

int run_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(data.data()), data.size());
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t inputs = 0, corpus_files = 0;
  for (int i = 1; i < argc; ++i) {
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(argv[i])) {
      for (const auto& e : std::filesystem::directory_iterator(argv[i])) files.push_back(e.path());
    } else {
      files.emplace_back(argv[i]);
    }
    for (const auto& f : files) {
      if (!std::filesystem::is_regular_file(f)) continue;
      run_file(f);
      ++inputs;
      ++corpus_files;
    }
  }
  // Plus a few inputs no corpus file holds.
  for (const char* s : {"", "{", "[", "{\"format\":\"spinwise-profile\",\"version\":1}", "null"}) {
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(s), std::string(s).size());
    ++inputs;
  }
  std::printf("replayed %zu inputs\n", inputs);
  return corpus_files >= 3 ? 0 : 1;  // a corpus that was not found must fail the test
}
