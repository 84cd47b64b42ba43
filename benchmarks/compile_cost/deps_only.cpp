// The baseline: only the libraries Launchpad stands on, and nothing of ours.
#include <boost/hana.hpp>
#include <httplib.h>
#include <nlohmann/json.hpp>

int main() {}
