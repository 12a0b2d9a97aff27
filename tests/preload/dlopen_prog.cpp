// Loads the interposer with dlopen() instead of LD_PRELOAD (a plugin host, a language runtime's
// FFI): it must load. Its thread-locals are initial-exec (src/CMakeLists.txt), which a dlopen'ed
// library may have only within glibc's static TLS surplus; a per-thread buffer of the profile's
// once took it past that ("cannot allocate memory in static TLS block"). preload.dlopen.
#include <dlfcn.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    std::fprintf(stderr, "dlopen_prog: %s\n", dlerror());
    return 1;
  }
  std::printf("loaded\n");
  return 0;
}
