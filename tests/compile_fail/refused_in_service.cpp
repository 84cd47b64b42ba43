// expect: LP_SERVICE(T, m): a parameter or the return type of T::m has no wire form
// expect: method<&Painter::fill>::uses<std::vector<std::variant<
// expect: std::variant has no wire form
// A type refused deep inside a method's parameter: the service check names
// the method and the parameter's type, then the reason for the innermost
// type that has no wire form.
#include <launchpad/launchpad.hpp>
#include <variant>

struct Painter {
  void fill(std::vector<std::variant<int, std::string>> colors) { count = colors.size(); }
  std::size_t count = 0;
};
LP_SERVICE(Painter, fill);

int main() {
  return 0;
}
