// expect: LP_SERVICE(T, m): a parameter or the return type of T::m has no wire form
// expect: method<&Store::put>::uses<Wide>::which_has_a_wire_form
// expect: the compiler names the fields of a plain struct of at most 64 fields
// expect: declare it with BOOST_HANA_DEFINE_STRUCT
// Wide has 65 fields, one more than the library names without a declaration.
#include <launchpad/launchpad.hpp>

struct Wide {
  int f0 = 0;
  int f1 = 0;
  int f2 = 0;
  int f3 = 0;
  int f4 = 0;
  int f5 = 0;
  int f6 = 0;
  int f7 = 0;
  int f8 = 0;
  int f9 = 0;
  int f10 = 0;
  int f11 = 0;
  int f12 = 0;
  int f13 = 0;
  int f14 = 0;
  int f15 = 0;
  int f16 = 0;
  int f17 = 0;
  int f18 = 0;
  int f19 = 0;
  int f20 = 0;
  int f21 = 0;
  int f22 = 0;
  int f23 = 0;
  int f24 = 0;
  int f25 = 0;
  int f26 = 0;
  int f27 = 0;
  int f28 = 0;
  int f29 = 0;
  int f30 = 0;
  int f31 = 0;
  int f32 = 0;
  int f33 = 0;
  int f34 = 0;
  int f35 = 0;
  int f36 = 0;
  int f37 = 0;
  int f38 = 0;
  int f39 = 0;
  int f40 = 0;
  int f41 = 0;
  int f42 = 0;
  int f43 = 0;
  int f44 = 0;
  int f45 = 0;
  int f46 = 0;
  int f47 = 0;
  int f48 = 0;
  int f49 = 0;
  int f50 = 0;
  int f51 = 0;
  int f52 = 0;
  int f53 = 0;
  int f54 = 0;
  int f55 = 0;
  int f56 = 0;
  int f57 = 0;
  int f58 = 0;
  int f59 = 0;
  int f60 = 0;
  int f61 = 0;
  int f62 = 0;
  int f63 = 0;
  int f64 = 0;
};

struct Store {
  void put(Wide row) { last = row.f64; }
  int last = 0;
};
LP_SERVICE(Store, put);
