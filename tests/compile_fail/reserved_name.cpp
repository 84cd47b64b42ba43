// expect: LP_SERVICE(T, m): lp::client uses the name m itself
// expect: listed<lp_service_definition<Registry>::lp_method_node>::has_a_name_of_its_own_in<lp::client<Registry>
// lp::client<T> has its own node() (the label it calls), so no method may take that name.
#include <launchpad/launchpad.hpp>
#include <string>

struct Registry {
  std::string node(int index) const { return "n" + std::to_string(index); }
};
LP_SERVICE(Registry, node);
