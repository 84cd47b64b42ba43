// expect: add_node<T>(label, args...): T takes another type where this argument is given
// expect: node<Producer>::argument<1>::is<lp::client<A>
// expect: ::where_the_node_takes<lp::client<B>
// A handle<A> becomes a client<A>, which cannot fill Producer's client<B>:
// the message names the argument, both services and the node.
#include <launchpad/launchpad.hpp>

struct A {
  long get() const { return 1; }
};
LP_SERVICE(A, get);

struct B {
  long get() const { return 2; }
};
LP_SERVICE(B, get);

struct Producer {
  lp::client<B> target;
  void run() { target.get(); }
};
LP_SERVICE(Producer);

void build(lp::program& p) {
  auto a = p.add_node<A>("a");
  p.add_node<B>("b");
  p.add_node<Producer>("producer", a);
}
