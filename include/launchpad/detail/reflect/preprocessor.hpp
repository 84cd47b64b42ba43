#pragma once

// LP_DETAIL_FOR_EACH(m, data, a, b, c) expands to m(data, a) m(data, b) m(data, c);
// LP_DETAIL_FOR_EACH_COMMA puts commas between them. C++20's __VA_OPT__ lets
// the recursion stop by itself; each name needs one more scan, and the
// EXPAND levels give enough for 86 names: the 64 methods LP_SERVICE promises
// (tests/unit-graph.cpp lists 64) and a margin. More levels would only
// lengthen every diagnostic that passes through them.

#define LP_DETAIL_PARENS ()
#define LP_DETAIL_EXPAND(...) \
  LP_DETAIL_EXPAND3(LP_DETAIL_EXPAND3(LP_DETAIL_EXPAND3(LP_DETAIL_EXPAND3(__VA_ARGS__))))
#define LP_DETAIL_EXPAND3(...) \
  LP_DETAIL_EXPAND2(LP_DETAIL_EXPAND2(LP_DETAIL_EXPAND2(LP_DETAIL_EXPAND2(__VA_ARGS__))))
#define LP_DETAIL_EXPAND2(...) \
  LP_DETAIL_EXPAND1(LP_DETAIL_EXPAND1(LP_DETAIL_EXPAND1(LP_DETAIL_EXPAND1(__VA_ARGS__))))
#define LP_DETAIL_EXPAND1(...) __VA_ARGS__

#define LP_DETAIL_FOR_EACH(macro, data, ...) \
  __VA_OPT__(LP_DETAIL_EXPAND(LP_DETAIL_FOR_EACH_STEP(macro, data, __VA_ARGS__)))
#define LP_DETAIL_FOR_EACH_STEP(macro, data, first, ...) \
  macro(data, first)                                     \
      __VA_OPT__(LP_DETAIL_FOR_EACH_AGAIN LP_DETAIL_PARENS(macro, data, __VA_ARGS__))
#define LP_DETAIL_FOR_EACH_AGAIN() LP_DETAIL_FOR_EACH_STEP

#define LP_DETAIL_FOR_EACH_COMMA(macro, data, ...) \
  __VA_OPT__(LP_DETAIL_EXPAND(LP_DETAIL_FOR_EACH_COMMA_STEP(macro, data, __VA_ARGS__)))
#define LP_DETAIL_FOR_EACH_COMMA_STEP(macro, data, first, ...) \
  macro(data, first) __VA_OPT__(                               \
      , LP_DETAIL_FOR_EACH_COMMA_AGAIN LP_DETAIL_PARENS(macro, data, __VA_ARGS__))
#define LP_DETAIL_FOR_EACH_COMMA_AGAIN() LP_DETAIL_FOR_EACH_COMMA_STEP
