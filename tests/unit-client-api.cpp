// The public surface of lp::client: members with the service methods' own
// parameter types (so braced arguments work, and an IDE shows the
// parameters), no internals reachable from user code, and async deadlines
// that count from the call. The static_asserts are the compile-time test:
// this file does not compile if they fail.
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "services.hpp"

namespace api {
struct Shapes {
  std::vector<int> echo(std::vector<int> values) const { return values; }
  long add(long x, const std::string& why) {
    return total += x * static_cast<long>(why.size());
  }
  double norm(t::Point at) const { return at.x * at.x + at.y * at.y; }
  long count() const { return total; }
  long total = 0;
};
LP_SERVICE(Shapes, echo, add, norm, count);
}  // namespace api

namespace {
using shapes = lp::client<api::Shapes>;

// Braced arguments initialize the parameters, as in a local call.
static_assert(requires(const shapes& c) { c.echo({1, 2, 3}); });
static_assert(requires(const shapes& c) { c.async.echo({1, 2, 3}); });
static_assert(requires(const shapes& c) { c.norm({3.0, 4.0}); });  // an aggregate
static_assert(requires(const shapes& c) { c.add({}, {}); });
static_assert(std::is_same_v<decltype(std::declval<const shapes&>().echo({1, 2})),
                             std::vector<int>>);
static_assert(std::is_same_v<decltype(std::declval<const shapes&>().async.echo({1, 2})),
                             std::future<std::vector<int>>>);

// The member is a plain member function with the method's parameter types
// (numbers by value, other types by const reference): a forwarding template
// has no `long` parameter, so only that member fits these pointer types.
static_assert(
    std::is_same_v<decltype(static_cast<long (shapes::*)(long, const std::string&) const>(
                       &shapes::add)),
                   long (shapes::*)(long, const std::string&) const>);
static_assert(
    std::is_invocable_r_v<std::vector<int>,
                          std::vector<int> (shapes::*)(const std::vector<int>&) const,
                          const shapes&, std::initializer_list<int>>);

// Arguments that convert still convert; arguments of the parameter's type
// are taken by reference, whatever their value category.
static_assert(requires(const shapes& c, std::vector<int>& lvalue, int small,
                       const char* text) {
  c.echo(lvalue);
  c.echo(std::vector<int>{});
  c.add(small, text);
});

// Only lp::client's own members are public: no deadline setter, no
// construction from a channel, no access to the channel or the deadline.
// (Templates, so that what does not compile is an answer, not an error.)
template <class C>
constexpr bool sets_deadline = requires(C& c) {
  c.lp_set_deadline(std::chrono::milliseconds(1));
};
template <class C>
constexpr bool sets_async_deadline = requires(C& c) {
  c.async.lp_set_deadline(std::chrono::milliseconds(1));
};
template <class C>
constexpr bool shows_deadline = requires(C& c) {
  c.lp_deadline_;
};
template <class C>
constexpr bool shows_channel = requires(C& c) {
  c.lp_channel_;
};
static_assert(std::is_default_constructible_v<shapes>);
static_assert(std::is_copy_constructible_v<shapes> && std::is_copy_assignable_v<shapes>);
static_assert(!std::is_constructible_v<shapes, std::shared_ptr<lp::detail::channel>>);
static_assert(!std::is_constructible_v<lp::detail::sync_caller,
                                       std::shared_ptr<lp::detail::channel>>);
static_assert(!sets_deadline<shapes> && !sets_async_deadline<shapes>);
static_assert(!shows_deadline<shapes> && !shows_channel<shapes>);
static_assert(requires(const shapes& c) {
  { c.with_deadline(std::chrono::milliseconds(1)) } -> std::same_as<shapes>;
  { c.node() } -> std::same_as<const std::string&>;
});
}  // namespace

TEST_SUITE("calls") {
  TEST_CASE(
      "client methods take the service's parameter types: braced arguments cross the "
      "wire") {
    lp::program p("braced");
    auto s = p.add_node<api::Shapes>("shapes");
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto shapes = running.client(s);
    CHECK(shapes.echo({1, 2, 3}) == std::vector<int>{1, 2, 3});
    CHECK(shapes.async.echo({4, 5}).get() == std::vector<int>{4, 5});
    CHECK(shapes.echo({}).empty());
    CHECK(shapes.norm({3.0, 4.0}) == 25.0);
    CHECK(shapes.add(2, {"ab"}) == 4);
    CHECK(shapes.add({}, "abc") == 4);
    std::vector<int> kept{7, 8};
    CHECK(shapes.echo(kept) == kept);
    const std::string why = "x";
    CHECK(shapes.async.add(1L, why).get() == 5);
    CHECK(shapes.count() == 5);
  }

  TEST_CASE(
      "an async call's deadline counts from the call, also while it waits for a pool "
      "thread") {
    lp::program p("queued");
    auto c = p.add_node<t::Counter>("counter");
    auto running = lp::launch<lp::test_multi_threading>(p);
    auto counter = running.client(c);

    // Every thread the call pool may start (256, util/thread_pool.hpp's
    // call_pool) is kept busy, so the next call waits in its queue.
    constexpr int pool_threads = 256;
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    for (int i = 0; i < pool_threads; ++i)
      lp::detail::call_pool().enqueue([released] { released.wait(); });
    auto behind_them = std::make_shared<std::atomic<bool>>(false);
    lp::detail::call_pool().enqueue([behind_them] { *behind_them = true; });

    auto queued = counter.with_deadline(std::chrono::milliseconds(100)).async.add(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK_FALSE(*behind_them);  // the pool is full: the call is still queued
    release.set_value();

    try {
      queued.get();
      FAIL("no deadline_exceeded");
    } catch (const lp::deadline_exceeded& e) {
      CHECK(e.method() == "add");
      CHECK(std::string(e.what()).find("100 ms") != std::string::npos);
      CHECK(std::string(e.what()).find("was not sent") != std::string::npos);
    }
    CHECK(counter.get() == 0);  // it never reached the node
    // The same deadline from a call made now, with threads free, is met.
    CHECK(counter.with_deadline(std::chrono::milliseconds(2000)).async.add(2).get() == 2);
  }
}
