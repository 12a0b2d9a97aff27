// Compiled with nothing but `pkg-config --cflags --libs spinwise`.
#include <spinwise/spinwise.hpp>

int main() {
  spinwise::cpu_relax_n(4);
  return spinwise::read_counter() != 0 || spinwise::backend_name() == "generic" ? 0 : 1;
}
