// The cost of a checkpoint of 100 MB of state, next to a plain write of the
// same 100 MB in the same run:
//   bench_checkpoint [directory]   (default /tmp; a real disk, not tmpfs, for
//                                   figures that mean something)
// A checkpoint is what a launch does for a node with lp_save: lp_save()
// copies the state under the node's call lock, the copy is encoded (CBOR
// typed array), written to a temporary file, fsync'ed and renamed. The
// baseline writes the state's bytes to a file and fsyncs it. Restoring is
// read, checked and decoded, next to reading the plain file back.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <launchpad/detail/checkpoint/checkpoints.hpp>
#include <launchpad/launchpad.hpp>
#include <memory>
#include <string>
#include <vector>

struct Big {
  std::vector<double> data =
      std::vector<double>(std::size_t{100} << 17, 0.25);  // 100 MiB
  long touch() { return static_cast<long>(++data[0]); }
  std::vector<double> lp_save() const { return data; }
  void lp_restore(std::vector<double> saved) { data = std::move(saved); }
};
LP_SERVICE(Big, touch);

namespace {
using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point start) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

void plain_write(const std::string& path, const std::vector<double>& data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 ||
      !lp::detail::write_fully(
          fd, std::string_view(reinterpret_cast<const char*>(data.data()),
                               data.size() * sizeof(double))) ||
      ::fsync(fd) != 0)
    throw std::runtime_error("cannot write " + path);
  ::close(fd);
}

std::vector<double> plain_read(const std::string& path, std::size_t count) {
  std::vector<double> out(count);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  auto* at = reinterpret_cast<char*>(out.data());
  std::size_t left = count * sizeof(double);
  for (ssize_t n; left > 0 && (n = ::read(fd, at, left)) > 0;
       at += n, left -= static_cast<std::size_t>(n)) {
  }
  ::close(fd);
  if (left != 0) throw std::runtime_error("short read of " + path);
  return out;
}
}  // namespace

int main(int argc, char** argv) {
  std::string parent = argc > 1 ? argv[1] : "/tmp";
  std::string dir = parent + "/lp-bench-checkpoint-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  lp::detail::typed_node<Big> node(std::make_unique<Big>());
  const std::size_t count = std::size_t{100} << 17;
  std::vector<double> state(count, 0.25);
  std::vector<double> save_ms, plain_ms, restore_ms, plain_read_ms;
  const int rounds = 7;
  for (int round = 0; round < rounds; ++round) {
    auto start = clock_type::now();
    lp::detail::write_checkpoint(dir + "/node.ckpt", "Big", node.save());
    save_ms.push_back(ms_since(start));

    start = clock_type::now();
    plain_write(dir + "/plain.bin", state);
    plain_ms.push_back(ms_since(start));

    start = clock_type::now();
    node.restore(*lp::detail::read_checkpoint(dir + "/node.ckpt", "Big"));
    restore_ms.push_back(ms_since(start));

    start = clock_type::now();
    auto back = plain_read(dir + "/plain.bin", count);
    plain_read_ms.push_back(ms_since(start));
    if (back != state) throw std::runtime_error("the plain file did not read back equal");
  }
  std::filesystem::remove_all(dir);
  std::printf("100 MiB of state (std::vector<double>), median of %d rounds, in %s\n",
              rounds, parent.c_str());
  std::printf(
      "| what | launchpad ms | baseline ms | ratio |\n| --- | --- | --- | --- |\n");
  std::printf(
      "| save: lp_save copy + CBOR + tmp file + fsync + rename | %.1f | plain write + "
      "fsync: %.1f | %.2f |\n",
      median(save_ms), median(plain_ms), median(save_ms) / median(plain_ms));
  std::printf(
      "| restore: read + checksum + decode + lp_restore | %.1f | plain read: %.1f | %.2f "
      "|\n",
      median(restore_ms), median(plain_read_ms),
      median(restore_ms) / median(plain_read_ms));
  return 0;
}
