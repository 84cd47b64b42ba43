#pragma once

/// @file
/// lp::cacher, a node that serves another node's answers to many callers,
/// and its lp::cache_config (docs/cacher.md). Not included by
/// `<launchpad/launchpad.hpp>`: a program that uses it includes this header.
//
// Why a template of the member pointer rather than a macro, or a
// client<Learner> with every method: the member pointer names the method in
// the type, so a typo, an unlisted or an overloaded method is a compile error
// where the node is added, and the actors' client cannot call a method the
// cacher does not serve. LP_SERVICE cannot be written for every T (a macro
// names one type), so the cacher declares its own service description
// (lp_service_lookup, below), built from the descriptor LP_SERVICE wrote for
// T::m (detail/reflect/forwarded_method.hpp).

#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>
#include <chrono>
#include <launchpad/client.hpp>
#include <launchpad/context.hpp>
#include <launchpad/detail/reflect/forwarded_method.hpp>
#include <launchpad/detail/reflect/signature.hpp>
#include <launchpad/detail/util/answer_cache.hpp>
#include <launchpad/detail/wire/cbor_encode.hpp>
#include <launchpad/detail/wire/protocol.hpp>
#include <launchpad/detail/wire/result.hpp>
#include <launchpad/error.hpp>
#include <launchpad/service.hpp>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

namespace lp {

/// How fresh an lp::cacher's answers are (docs/cacher.md, "What a caller
/// gets, and when").
struct cache_config {
  /// The node behind is asked at most once per `refresh` (per argument
  /// list): within it, callers get the last answer.
  std::chrono::milliseconds refresh{100};
  /// No caller gets an answer older than this (counted from when the node
  /// behind gave it): past it, callers wait for a fresh one. At least
  /// `refresh`. Between the two, callers get the last answer while one of
  /// them asks for a new one.
  std::chrono::milliseconds max_staleness{1000};
  /// The deadline of each call to the node behind.
  std::chrono::milliseconds deadline{std::chrono::minutes(2)};
};

template <class T, auto Method>
class cacher;

namespace detail {

// T's descriptor of Method, or void if T is no service or does not list it
// (cacher's static_asserts then say so).
template <class T, auto Method, bool = service<T>>
struct cached_listing {
  using type = void;
};
template <class T, auto Method>
struct cached_listing<T, Method, true> {
  using type = listed_descriptor<Method, decltype(service_definition<T>::methods)>;
};

// Whether T lists Method, which a cacher can then serve; a service that does
// not gets the cacher's own message (refused_cacher_definition), not a
// second one saying that cacher<T, Method> is no service.
template <class T, auto Method>
concept cacheable = !std::is_void_v<typename cached_listing<T, Method>::type>;
template <class T, auto Method>
concept refused_for_cacher = service<T> && !cacheable<T, Method>;

inline constexpr std::string_view cacher_prefix = "lp::cacher<",
                                  cacher_scope = "::", cacher_suffix = ">";

// "lp::cacher<Learner::get_parameters>", for describe and the status page.
template <class T, class Listed>
struct cacher_name {
  static constexpr std::string_view value =
      joined_name<cacher_prefix, service_definition<T>::name, cacher_scope, Listed::name,
                  cacher_suffix>::value;
};
template <class T>
struct cacher_name<T, void> {
  static constexpr std::string_view value = cacher_prefix;
};

// The member function a cacher serves T::m's calls with: T::m's own
// parameters and result, so that the node decodes and encodes them as T's
// node would.
template <class Cacher, class Result, class Params>
struct cached_method;
template <class Cacher, class Result, class... P>
struct cached_method<Cacher, Result, std::tuple<P...>> {
  Result answer(const P&... args) {
    return static_cast<Cacher&>(*this).lp_answer(args...);
  }
};

template <class T, auto Method>
using cached_signature = member_function<decltype(Method)>;

// Whether T's LP_SERVICE lists Method, checked in a function: its
// static_assert says so alone, and leaves lp::cacher<T, Method> a class
// that add_node can take (clang++ takes a class whose own static_assert
// failed for broken, and add_node would then add a second message). The
// cacher is then a service of no methods (refused_cacher_definition).
template <class T, auto Method>
constexpr bool cacher_method_listed() {
  static_assert(!service<T> || !std::is_void_v<typename cached_listing<T, Method>::type>,
                "lp::cacher<T, &T::m>: LP_SERVICE(T, ...) does not list m (T::m is named "
                "beside this message); a cacher serves a remote method: add m to T's "
                "LP_SERVICE");
  return true;
}

// What lp_service_lookup gives for a cacher of a method T's LP_SERVICE does
// not list: a service, of no methods, so that add_node does not say that
// the cacher is no service after cacher_method_listed has said why.
template <class Service>
struct refused_cacher_definition {
  using service_type = Service;
  static constexpr std::string_view name = cacher_prefix;
  static constexpr auto methods = boost::hana::tuple_t<>;
  template <class Caller>
  struct proxy : Caller {
    using Caller::Caller;
  };
};

}  // namespace detail

/// A node in front of method `Method` of a node serving T (Launchpad's
/// CacherNode): it serves the method's last answer to any number of callers
/// and asks the node behind it at most once per refresh interval.
///
/// ```cpp
/// #include <launchpad/cacher.hpp>
///
/// auto weights = p.add_node<lp::cacher<Learner, &Learner::get_parameters>>(
///     "weights", learner, lp::cache_config{.refresh = 100ms, .max_staleness = 1s});
/// ...
/// lp::client<lp::cacher<Learner, &Learner::get_parameters>> weights;  // in an actor
/// auto q = weights.get_parameters();  // the learner's answer, at most 1 s old
/// ```
///
/// A client of the cacher has that one method, with the same name and
/// parameters as on `lp::client<Learner>`, and the compiler checks its calls
/// the same way. A method with parameters is cached per argument list. When
/// the node behind fails and no answer is young enough, callers get
/// lp::upstream_error; a caller whose deadline passes while it waits for a
/// fresh answer gets lp::deadline_exceeded, never a stale one.
///
/// @tparam T a service (LP_SERVICE)
/// @tparam Method `&T::m`, a method T's LP_SERVICE lists, that returns a
/// value and is not LP_BATCHED; anything else is a compile error that says so
template <class T, auto Method>
class cacher
    : public detail::cached_method<cacher<T, Method>,
                                   typename detail::cached_signature<T, Method>::result,
                                   typename detail::cached_signature<T, Method>::params> {
  using listed = typename detail::cached_listing<T, Method>::type;
  using result = typename detail::cached_signature<T, Method>::result;
  using params = typename detail::cached_signature<T, Method>::params;

  static_assert(service<T>,
                "lp::cacher<T, &T::m>: T is not a service; declare it with "
                "LP_SERVICE(T, m, ...) right after T");
  static_assert(detail::cacher_method_listed<T, Method>());
  static_assert(std::is_void_v<listed> || !detail::batched_method<listed>,
                "lp::cacher<T, &T::m>: T::m is batched (LP_BATCHED), and a cacher takes "
                "whole calls; put the cacher in front of a method that is not batched");
  static_assert(!std::is_void_v<result>,
                "lp::cacher<T, &T::m>: T::m returns void, so there is no answer to keep; "
                "a cacher serves a method that returns what callers want");

  friend struct detail::cached_method<cacher, result, params>;

 public:
  /// Many callers at once (lp::concurrent_handlers): the ones served from
  /// the cache do not queue behind the one who asks the node behind.
  static constexpr bool lp_concurrent_handlers = true;

  /// A cacher of the node `behind`, which comes from the lp::handle given to
  /// add_node.
  /// @throws lp::usage_error for a config with a negative refresh, a
  /// max_staleness shorter than refresh, or a deadline that is not positive
  /// (the node fails to build, and the launch says so)
  explicit cacher(client<T> behind, cache_config config = {})
      : behind_(behind.with_deadline(config.deadline)),
        config_(checked(config)),
        label_(own_label()),
        cache_({config.refresh, config.max_staleness}) {}

 private:
  template <class... P>
  result lp_answer(const P&... args) {
    std::string key;
    (detail::cbor::write(key, args), ...);
    return cache_.get(
        key, caller_deadline(),
        [&] {
          try {
            return detail::proxy_call<listed, detail::sync_caller>(behind_, args...);
          } catch (const stopping& e) {
            // The program stops: so do the callers, cleanly (lp::stopping).
            throw detail::call_failure(503, detail::protocol::error::stopping, e.what());
          } catch (const std::exception& e) {
            throw detail::call_failure(
                502, std::string(detail::protocol::error::upstream_failed),
                failed(e.what()));
          }
        },
        [&] {
          throw detail::call_failure(
              504, detail::protocol::error::deadline_exceeded,
              "the caller's deadline passed while the cacher '" + label_ +
                  "' waited for a fresh answer of " + behind_.node() + "." +
                  std::string(listed::name) +
                  " (its last answer is older than max_staleness, " +
                  std::to_string(config_.max_staleness.count()) +
                  " ms); give the call a longer deadline, or the cacher a longer "
                  "max_staleness");
        });
  }

  std::string failed(const std::string& why) const {
    auto behind = behind_.node(), method = std::string(listed::name);
    return "the cacher '" + label_ + "' has no answer of " + behind + "." + method +
           " younger than its max_staleness (" +
           std::to_string(config_.max_staleness.count()) + " ms) to serve, and asking '" +
           behind + "' failed: " + why + ". It asks '" + behind +
           "' again at most every " + std::to_string(config_.refresh.count()) +
           " ms and serves its answers as soon as it answers: retry later, and if it "
           "keeps failing, look at why '" +
           behind + "' does (its log)";
  }

  static cache_config checked(cache_config config) {
    if (config.refresh.count() < 0 || config.max_staleness < config.refresh ||
        config.deadline.count() <= 0)
      throw usage_error(
          "lp::cache_config: refresh " + std::to_string(config.refresh.count()) +
          " ms, max_staleness " + std::to_string(config.max_staleness.count()) +
          " ms, deadline " + std::to_string(config.deadline.count()) +
          " ms; give 0 <= refresh <= max_staleness and a positive deadline");
    return config;
  }

  // Outside a node (a unit test building one by hand) it has no label.
  static std::string own_label() {
    try {
      return context().label;
    } catch (const usage_error&) {
      return "cacher";
    }
  }

  client<T> behind_;
  cache_config config_;
  std::string label_;
  detail::answer_cache<result> cache_;
};

namespace detail {
template <class T, auto Method>
using cacher_definition = forwarding_definition<
    cacher<T, Method>, cacher_name<T, typename cached_listing<T, Method>::type>::value,
    typename cached_listing<T, Method>::type, &cacher<T, Method>::answer>;
}  // namespace detail

// The description LP_SERVICE would have written for cacher<T, Method>, found
// by argument-dependent lookup as LP_SERVICE's is (lp_service_tag's
// argument is in namespace lp).
template <class T, auto Method>
requires(detail::cacheable<T, Method>)
    detail::cacher_definition<T, Method> lp_service_lookup(
        lp_service_tag<cacher<T, Method>>);

template <class T, auto Method>
requires(detail::refused_for_cacher<T, Method>)
    detail::refused_cacher_definition<cacher<T, Method>> lp_service_lookup(
        lp_service_tag<cacher<T, Method>>);

}  // namespace lp
