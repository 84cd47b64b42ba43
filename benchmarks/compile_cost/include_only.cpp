// The price of the include alone.
#include <launchpad/launchpad.hpp>

int main() {}
