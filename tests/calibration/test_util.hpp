#pragma once
// Small helpers shared by the calibration tests: temporary directories and files, and the check
// of a name parser.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>

namespace spinwise_test {

// A fresh directory under the system temp dir, removed with everything in it on destruction.
class temp_dir {
 public:
  temp_dir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "spinwise-test-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

// Writes `text` to `path`, creating its directories.
inline void write_file(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// An enum's names round-trip: each of `values` parses back from its to_string() name, and `bad`
// is refused with the output left as it was (`untouched`).
template <class E, class Parse>
void expect_names_round_trip(std::initializer_list<E> values, Parse parse, std::string_view bad,
                             E untouched) {
  for (E v : values) {
    E back = untouched;
    ASSERT_TRUE(parse(to_string(v), back)) << to_string(v);
    EXPECT_EQ(back, v);
  }
  E out = untouched;
  EXPECT_FALSE(parse(bad, out));
  EXPECT_EQ(out, untouched);
}

}  // namespace spinwise_test
