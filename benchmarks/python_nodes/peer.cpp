// The C++ side of benchmarks/python_nodes/bench.py: a program with a Python
// node "pybench" (bench_node.py, class PyBench), a C++ node "target" that
// the Python node calls, and a C++ node "driver" whose methods time the C++
// client calling the Python node, and a raw TCP echo of the same bytes, so
// that the script runs them interleaved with its gRPC baseline.
//
//   python_nodes_bench_peer --lp_launch=local_mt --lp_python=/usr/bin/python3
//     (with PYTHONPATH holding the checkout's python/ and this folder;
//      runs until stopped)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <latch>
#include <launchpad/launchpad.hpp>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace python_nodes_bench {

using steady = std::chrono::steady_clock;

// Served by bench_node.py's class PyBench.
struct PyBench {
  long add(long x);
  std::vector<float> echo(std::vector<float> values);
  long pid();
  // Microseconds of each of n blocking Python -> C++ target.add calls.
  std::vector<double> cpp_small_calls(long n);
  // callers Python threads calling target.add for `seconds`: {calls, wall s}.
  std::vector<double> cpp_rate(long callers, double seconds);
};
LP_SERVICE(PyBench, add, echo, pid, cpp_small_calls, cpp_rate);
LP_PYTHON(PyBench, "bench_node", "PyBench");

// The C++ node the Python node calls.
struct Target {
  long add(long x) { return x + 1; }
  // No state: calls run at once, as PyBench's and gRPC's do.
  static constexpr bool lp_concurrent_handlers = true;
};
LP_SERVICE(Target, add);

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what);
}

void write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    auto sent = ::send(fd, data, size, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0) fail(std::string("raw TCP send: ") + std::strerror(errno));
    data += sent;
    size -= static_cast<std::size_t>(sent);
  }
}

void read_all(int fd, char* data, std::size_t size) {
  while (size > 0) {
    auto got = ::recv(fd, data, size, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail(std::string("raw TCP recv: ") + std::strerror(errno));
    if (got == 0) fail("raw TCP echo: the server closed mid-message");
    data += got;
    size -= static_cast<std::size_t>(got);
  }
}

// A connection to bench.py's Python echo server: each message is an 8-byte
// length (little-endian) and that many bytes; the server sends the bytes
// back, received into a numpy array.
class raw_echo_connection {
 public:
  explicit raw_echo_connection(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) fail(std::string("raw TCP socket: ") + std::strerror(errno));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      std::string why = std::strerror(errno);
      ::close(fd_);
      fail("raw TCP echo: cannot connect to 127.0.0.1:" + std::to_string(port) + ": " +
           why);
    }
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  raw_echo_connection(const raw_echo_connection&) = delete;
  raw_echo_connection& operator=(const raw_echo_connection&) = delete;
  ~raw_echo_connection() { ::close(fd_); }

  // Sends `values` and returns what comes back, in a new vector (as the
  // launchpad client's echo returns one).
  std::vector<float> round_trip(const std::vector<float>& values) {
    std::uint64_t length = values.size() * sizeof(float);
    char head[8];
    for (int i = 0; i < 8; ++i) head[i] = static_cast<char>(length >> (8 * i));
    iovec pieces[2] = {{head, sizeof head}, {const_cast<float*>(values.data()), length}};
    msghdr message{};
    message.msg_iov = pieces;
    message.msg_iovlen = 2;
    auto sent = ::sendmsg(fd_, &message, MSG_NOSIGNAL);
    if (sent < 0) fail(std::string("raw TCP sendmsg: ") + std::strerror(errno));
    auto done = static_cast<std::size_t>(sent);
    if (done < sizeof head) {
      write_all(fd_, head + done, sizeof head - done);
      done = sizeof head;
    }
    write_all(fd_, reinterpret_cast<const char*>(values.data()) + (done - sizeof head),
              length - (done - sizeof head));
    std::vector<float> back(values.size());
    read_all(fd_, reinterpret_cast<char*>(back.data()), length);
    return back;
  }

 private:
  int fd_ = -1;
};

std::vector<float> ramp(long count) {
  std::vector<float> values(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(i) * 0.5f;
  return values;
}

struct Driver {
  lp::client<PyBench> python;

  // Microseconds of each of n blocking python.add(i) calls, checked.
  std::vector<double> small_calls(long n) {
    std::vector<double> us;
    us.reserve(static_cast<std::size_t>(n));
    for (long i = 0; i < n; ++i) {
      auto start = steady::now();
      long got = python.add(i);
      us.push_back(
          std::chrono::duration<double, std::micro>(steady::now() - start).count());
      if (got != i + 1) fail("python.add returned a wrong sum");
    }
    return us;
  }

  // `callers` threads calling python.add through this node's one client
  // (copies share its connection pool; one connection per thread that
  // calls at once) for `seconds`: {calls, wall seconds}. Checked.
  std::vector<double> rate(long callers, double seconds) {
    std::atomic<long> calls{0};
    std::atomic<bool> wrong{false};
    std::string error;
    std::mutex error_mutex;
    std::latch start_line(callers + 1);
    auto stop_at = steady::now() + std::chrono::duration_cast<steady::duration>(
                                       std::chrono::duration<double>(seconds));
    std::vector<std::thread> threads;
    for (long k = 0; k < callers; ++k)
      threads.emplace_back([&] {
        start_line.arrive_and_wait();
        long n = 0;
        try {
          while (steady::now() < stop_at) {
            if (python.add(n) != n + 1) wrong = true;
            ++n;
          }
        } catch (const std::exception& e) {
          std::lock_guard lock(error_mutex);
          error = e.what();
        }
        calls += n;
      });
    auto start = steady::now();
    start_line.arrive_and_wait();
    for (auto& t : threads) t.join();
    double wall = std::chrono::duration<double>(steady::now() - start).count();
    if (!error.empty()) fail("a caller failed: " + error);
    if (wrong) fail("python.add returned a wrong sum under 8 callers");
    return {static_cast<double>(calls.load()), wall};
  }

  // Milliseconds of each of n echoes of `count` float32 through the Python
  // node's echo, each checked against what was sent.
  std::vector<double> echoes(long n, long count) {
    auto values = ramp(count);
    std::vector<double> ms;
    for (long i = 0; i < n; ++i) {
      auto start = steady::now();
      auto back = python.echo(values);
      ms.push_back(
          std::chrono::duration<double, std::milli>(steady::now() - start).count());
      if (back != values) fail("the Python node's echo differs from what was sent");
    }
    return ms;
  }

  // Milliseconds of each of n memcpys of `count` float32 into memory
  // already faulted in, in this process: the unit of the echo on one host
  // (bench.py --same-host).
  std::vector<double> copies(long n, long count) {
    auto values = ramp(count);
    std::vector<float> copy(values.size());
    std::memcpy(copy.data(), values.data(), values.size() * sizeof(float));  // faulted in
    std::vector<double> ms;
    for (long i = 0; i < n; ++i) {
      auto start = steady::now();
      std::memcpy(copy.data(), values.data(), values.size() * sizeof(float));
      ms.push_back(
          std::chrono::duration<double, std::milli>(steady::now() - start).count());
      if (copy[values.size() / 2] != values[values.size() / 2])
        fail("memcpy copied wrong");
    }
    return ms;
  }

  // The same round trips over a plain TCP connection to bench.py's Python
  // echo server at 127.0.0.1:port (a new connection per call of this
  // method, made before the timing).
  std::vector<double> raw_echoes(long port, long n, long count) {
    auto values = ramp(count);
    raw_echo_connection connection(static_cast<int>(port));
    std::vector<double> ms;
    for (long i = 0; i < n; ++i) {
      auto start = steady::now();
      auto back = connection.round_trip(values);
      ms.push_back(
          std::chrono::duration<double, std::milli>(steady::now() - start).count());
      if (back != values) fail("the raw TCP echo differs from what was sent");
    }
    return ms;
  }
};
LP_SERVICE(Driver, small_calls, rate, echoes, copies, raw_echoes);

}  // namespace python_nodes_bench

int main(int argc, char** argv) {
  using namespace python_nodes_bench;
  lp::program p("python_nodes_bench");
  auto target = p.add_node<Target>("target");
  auto python = p.add_node<PyBench>("pybench", target);
  p.add_node<Driver>("driver", python);
  return lp::launch<lp::local_multi_threading>(p, argc, argv);
}
