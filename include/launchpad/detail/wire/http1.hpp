#pragma once

// HTTP/1.1 framing (RFC 9112) over bytes already read: the field lines,
// lengths and chunk sizes that the client's responses and the server's
// requests share, and a request's head. No sockets here; the readers that
// find a head's end and read bodies hold the limits on size and time.

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lp::detail::http1 {

// ASCII only: field names and the tokens we compare are, whatever the locale.
constexpr char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c;
}

constexpr bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

// Without the optional white space (SP, HTAB) around a field value.
constexpr std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// At most 60 bytes of what a peer sent, fit for an error message.
inline std::string printable(std::string_view text) {
  std::string out(text.substr(0, 60));
  for (char& c : out)
    if (c < ' ' || c > '~') c = '?';
  return text.size() > 60 ? out + "..." : out;
}

// Whether a comma-separated field value ("close, TE") lists `token`.
constexpr bool lists(std::string_view value, std::string_view token) {
  for (;;) {
    auto comma = value.find(',');
    if (iequals(trim(value.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) return false;
    value.remove_prefix(comma + 1);
  }
}

// A decimal number of digits only, or nothing (other characters, empty, or
// past size_t): a Content-Length.
constexpr std::optional<std::size_t> decimal(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::size_t n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    auto digit = static_cast<std::size_t>(c - '0');
    if (n > (std::numeric_limits<std::size_t>::max() - digit) / 10) return std::nullopt;
    n = n * 10 + digit;
  }
  return n;
}

// The size a chunk's line declares ("1a3f", "1a3f;name=value": extensions
// carry nothing we use), or nothing if the line is malformed or the size
// is past size_t.
constexpr std::optional<std::size_t> chunk_size(std::string_view line) {
  std::size_t size = 0, i = 0;
  for (; i < line.size(); ++i) {
    char c = lower(line[i]);
    int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) break;
    if (size > (std::numeric_limits<std::size_t>::max() >> 4)) return std::nullopt;
    size = size * 16 + static_cast<std::size_t>(digit);
  }
  auto rest = trim(line.substr(i));
  if (i == 0 || (!rest.empty() && rest.front() != ';')) return std::nullopt;
  return size;
}

// A path with its %XX escapes decoded into `into` (a "%" without two hex
// digits stays as it is); `path` itself when it has none.
inline std::string_view percent_decoded(std::string_view path, std::string& into) {
  if (path.find('%') == std::string_view::npos) return path;
  auto hex = [](char c) {
    c = lower(c);
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  into.clear();
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%' && i + 2 < path.size() && hex(path[i + 1]) >= 0 &&
        hex(path[i + 2]) >= 0) {
      into += static_cast<char>(hex(path[i + 1]) * 16 + hex(path[i + 2]));
      i += 2;
    } else {
      into += path[i];
    }
  }
  return into;
}

// RFC 9110's tchar: what a method and a field name are made of.
constexpr bool token_char(char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
    return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}
constexpr bool token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!token_char(c)) return false;
  return true;
}

struct field {
  std::string_view name, value;
};

// "Name: value" without its CRLF, or nothing if it is not a field line: a
// name that is no token (white space before the colon included, which
// RFC 9112 has a server reject rather than guess at), a line folded onto
// the one before it, a CR, LF or NUL inside.
constexpr std::optional<field> field_line(std::string_view line) {
  auto colon = line.find(':');
  if (colon == std::string_view::npos || !token(line.substr(0, colon)))
    return std::nullopt;
  auto value = line.substr(colon + 1);
  for (char c : value)
    if (c == '\r' || c == '\n' || c == '\0') return std::nullopt;
  return field{line.substr(0, colon), trim(value)};
}

// Why a request's head cannot be served: the status to answer (400, 417,
// 501 or 505), and what to tell its sender.
struct head_error {
  int status;
  std::string message;
};

// A request's head, as views into the bytes it was parsed from.
struct request_head {
  std::string_view method, target;
  bool http10 = false;
  std::optional<std::size_t> length;  // Content-Length
  bool chunked = false;               // Transfer-Encoding: chunked
  bool keep_alive = true;             // after this request, by its version and Connection
  bool expect_continue = false;       // Expect: 100-continue
  std::vector<field> fields;          // every field line, in order

  // The first field of this name (names compare without case), or "".
  std::string_view field_value(std::string_view name) const {
    for (const auto& f : fields)
      if (iequals(f.name, name)) return f.value;
    return {};
  }
  // The target's path and query ("/a/b?c" has "/a/b" and "c").
  std::string_view path() const { return target.substr(0, target.find('?')); }
  std::string_view query() const {
    auto mark = target.find('?');
    return mark == std::string_view::npos ? std::string_view{} : target.substr(mark + 1);
  }
};

// Parses `text`, a request's head from its request line up to and including
// the CRLF of its last field line (the empty line that ends it left out),
// into `head`, whose fields' storage is reused. Nothing if it may be
// served; else why not. A target in absolute form ("http://host/path", as
// a proxy sends) is taken by its path, as RFC 9112 has a server do.
inline std::optional<head_error> parse_request_head(std::string_view text,
                                                    request_head& head) {
  head.fields.clear();
  head.length.reset();
  head.chunked = head.expect_continue = false;
  auto eol = text.find("\r\n");
  auto line = text.substr(0, eol);
  text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 2);

  auto first_space = line.find(' ');
  auto last_space = line.rfind(' ');
  if (first_space == std::string_view::npos || first_space == last_space)
    return head_error{400, "the request line is not 'METHOD /path HTTP/1.1': '" +
                               printable(line) + "'"};
  head.method = line.substr(0, first_space);
  head.target = line.substr(first_space + 1, last_space - first_space - 1);
  auto version = line.substr(last_space + 1);
  if (!token(head.method))
    return head_error{400,
                      "the request's method is not a token: '" + printable(line) + "'"};
  if (version != "HTTP/1.1" && version != "HTTP/1.0")
    return head_error{
        version.starts_with("HTTP/") ? 505 : 400,
        "this node speaks HTTP/1.1 (and 1.0), not '" + printable(version) + "'"};
  head.http10 = version == "HTTP/1.0";
  for (auto scheme : {std::string_view("http://"), std::string_view("https://")})
    if (head.target.size() > scheme.size() &&
        iequals(head.target.substr(0, scheme.size()), scheme)) {
      auto slash = head.target.find('/', scheme.size());
      head.target = slash == std::string_view::npos ? "/" : head.target.substr(slash);
    }
  if (head.target.empty() || head.target.front() != '/' ||
      head.target.find_first_of(" \t\r\n") != std::string_view::npos ||
      head.target.find('\0') != std::string_view::npos)
    return head_error{400,
                      "the request's target is not a path: '" + printable(line) + "'"};

  bool close = false, keep_alive = false;
  while (!text.empty()) {
    eol = text.find("\r\n");
    line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 2);
    auto f = field_line(line);
    if (!f)
      return head_error{400,
                        "a malformed header line (a name, a colon, a value, on one "
                        "line): '" +
                            printable(line) + "'"};
    head.fields.push_back(*f);
    if (iequals(f->name, "Content-Length")) {
      auto length = decimal(f->value);
      // All digits, past size_t: larger than any limit, which refuses it.
      if (!length && !f->value.empty() &&
          f->value.find_first_not_of("0123456789") == std::string_view::npos)
        length = std::numeric_limits<std::size_t>::max();
      if (!length || (head.length && *head.length != *length))
        return head_error{400, "a Content-Length that is not one number: '" +
                                   printable(f->value) + "'"};
      head.length = length;
    } else if (iequals(f->name, "Transfer-Encoding")) {
      if (!iequals(f->value, "chunked"))
        return head_error{501, "this node reads bodies in one piece or chunked, not '" +
                                   printable(f->value) + "' (Transfer-Encoding)"};
      head.chunked = true;
    } else if (iequals(f->name, "Connection")) {
      close = close || lists(f->value, "close");
      keep_alive = keep_alive || lists(f->value, "keep-alive");
    } else if (iequals(f->name, "Expect")) {
      if (!iequals(f->value, "100-continue"))
        return head_error{417, "this node meets no expectation but 100-continue, not '" +
                                   printable(f->value) + "'"};
      head.expect_continue = !head.http10;
    }
  }
  // Both would let two readers disagree on where the body ends.
  if (head.chunked && head.length)
    return head_error{400, "a request with both Content-Length and Transfer-Encoding"};
  head.keep_alive = !close && (!head.http10 || keep_alive);
  return std::nullopt;
}

}  // namespace lp::detail::http1
