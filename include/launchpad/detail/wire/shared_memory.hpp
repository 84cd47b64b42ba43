#pragma once

// Bulk data between two processes of one host, through shared memory
// (docs/protocol.md, "Bulk data through shared memory").
//
// Over a unix socket (wire/local_socket.hpp) a message's large typed arrays
// need not cross as bytes of its body: the sender copies them into a
// segment, a memfd (anonymous memory with a descriptor, never a file in
// /dev/shm, so a container's small /dev/shm is no limit), sends the
// descriptor with the message (SCM_RIGHTS), and writes in the body, in
// place of each array's byte string, a reference to where in the segment
// its bytes are (cbor::shared_bytes_tag). The receiver maps the segment
// and reads: into a std::vector with one copy, into an lp::tensor or a
// numpy array with none (they read the segment in place).
//
// Segments are lent, and come back. A process owns the segments it made
// (segment_pool, up to a cap of bytes), fills one and lends it with a
// message; the peer's next message on that connection says which of the
// segments it got it is done with (no value read in place from them lives
// on: Lp-Returned), and those are free again, already mapped and with
// their pages in memory, so that steady traffic never maps, zeroes or
// faults in memory anew. One the peer keeps (a tensor a node stores) is
// given away: its maker forgets it, and its memory goes with the peer's
// last use. A connection that ends gives away what it had lent and lets
// go of what it held of the peer's. The memory of a segment thus lives
// exactly as long as a process maps it, whatever ends which process (a
// kill -9 too): nothing is left behind, in /dev/shm or anywhere.
//
// Past the cap (a burst of large calls in flight), a message's arrays go
// in its body, through the socket, as over TCP; the pool counts it (a
// node's lp_shared_memory_fallbacks_total).
//
// A segment is untrusted input: one that is not a memfd, not sealed
// against shrinking (a peer could truncate it under our reads: SIGBUS),
// empty or larger than the receiver takes, or a reference outside its
// bounds, is refused with a clear error (400 on a node) before anything
// reads it (cbor_reader.hpp checks references).

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <launchpad/detail/protocol/constants.hpp>
#include <launchpad/detail/wire/cbor_encode.hpp>
#include <launchpad/detail/wire/cbor_reader.hpp>
#include <launchpad/detail/wire/local_socket.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lp::detail {

// What is wrong with the segments a message brought: the peer's fault.
struct segment_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The head fields of the protocol's shared memory (docs/protocol.md):
// Lp-Bulk: shm      the sender reads segments in messages to it;
// Lp-Segments: n    this message brought n descriptors;
// Lp-Returned: i,j  of the segments of the receiver's last message, the
//                   sender is done with numbers i and j (and keeps none of
//                   the others).
namespace bulk_field {
inline constexpr std::string_view bulk = protocol::header::bulk;
inline constexpr std::string_view segments = protocol::header::segments;
inline constexpr std::string_view returned = protocol::header::returned;
}  // namespace bulk_field

// One memfd, mapped in this process.
class segment {
 public:
  struct identity {
    dev_t device;
    ino_t inode;
    auto operator<=>(const identity&) const = default;
  };

  // A new segment of this process's: `size` bytes, sealed against any
  // change of size, mapped for reading and writing. Null where the system
  // will not (no memory, or no memfd_create: before Linux 3.17).
  static std::shared_ptr<segment> create(std::size_t size) {
    int fd = ::memfd_create("launchpad", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return nullptr;
    if (::ftruncate(fd, static_cast<off_t>(size)) != 0 ||
        ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
      ::close(fd);
      return nullptr;
    }
    void* at = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (at == MAP_FAILED) {
      ::close(fd);
      return nullptr;
    }
    struct stat about {};
    ::fstat(fd, &about);
    return std::shared_ptr<segment>(new segment(fd, static_cast<char*>(at), size, true,
                                                {about.st_dev, about.st_ino}));
  }

  // A peer's segment, which came as descriptor `fd` (taken: closed on
  // failure too): mapped for reading, and for writing where the peer's
  // descriptor allows (values read in place are then writable). Throws
  // segment_error for one that is not a memfd sealed against shrinking,
  // that is empty or that is larger than `largest` bytes.
  static std::shared_ptr<segment> adopt(int fd, std::size_t largest) {
    struct stat about {};
    auto refuse = [fd](const std::string& why) {
      ::close(fd);
      throw segment_error(why);
    };
    if (::fstat(fd, &about) != 0 || !S_ISREG(about.st_mode))
      refuse("a descriptor that came with the message is not a memfd");
    int seals = ::fcntl(fd, F_GET_SEALS);
    if (seals < 0) refuse("a descriptor that came with the message is not a memfd");
    if (!(seals & F_SEAL_SHRINK))
      refuse(
          "a segment that came with the message is not sealed against shrinking "
          "(F_SEAL_SHRINK): it could be cut short under the reader");
    auto size = static_cast<std::size_t>(about.st_size);
    if (size == 0 || size > largest)
      refuse("a segment of " + std::to_string(size) + " bytes came with the message; " +
             (size == 0 ? std::string("an empty one holds nothing")
                        : "this end takes at most " + std::to_string(largest)));
    bool writable = true;
    void* at = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (at == MAP_FAILED && (errno == EACCES || errno == EPERM)) {
      writable = false;  // a read-only descriptor, or one sealed against writes
      at = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    }
    if (at == MAP_FAILED)
      refuse(std::string("a segment that came with the message cannot be mapped: ") +
             std::strerror(errno));
    return std::shared_ptr<segment>(new segment(fd, static_cast<char*>(at), size,
                                                writable, {about.st_dev, about.st_ino}));
  }

  ~segment() {
    ::munmap(data_, size_);
    ::close(fd_);
  }
  segment(const segment&) = delete;
  segment& operator=(const segment&) = delete;

  int fd() const { return fd_; }
  char* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool writable() const { return writable_; }
  const identity& id() const { return id_; }

 private:
  segment(int fd, char* data, std::size_t size, bool writable, identity id)
      : fd_(fd), data_(data), size_(size), writable_(writable), id_(id) {}
  const int fd_;
  char* const data_;
  const std::size_t size_;
  const bool writable_;
  const identity id_;
};

// The identity of the file behind a descriptor; nothing if it has none.
inline std::optional<segment::identity> identity_of(int fd) {
  struct stat about {};
  if (::fstat(fd, &about) != 0) return std::nullopt;
  return segment::identity{about.st_dev, about.st_ino};
}

// The segments this process made: free, lent or in use, within a cap of
// bytes. One per process, shared by its clients and servers.
class segment_pool {
 public:
  using clock = std::chrono::steady_clock;

  // A free segment unused this long is unmapped: the memory of a burst
  // goes back to the system.
  static constexpr auto idle_limit = std::chrono::seconds(30);

  static segment_pool& of_process() {
    static segment_pool pool;
    return pool;
  }

  struct figures {
    std::size_t bytes = 0;         // of the segments it holds now
    std::uint64_t lent = 0;        // messages whose arrays went in a segment
    std::uint64_t fallbacks = 0;   // ... that went in the body, past the cap
    std::uint64_t given_away = 0;  // segments a peer kept
  };

  // The most bytes of segments it holds at once (--lp_shared_memory_mb).
  void set_cap(std::size_t bytes) {
    std::lock_guard lock(mutex_);
    cap_ = bytes;
  }
  std::size_t cap() const {
    std::lock_guard lock(mutex_);
    return cap_;
  }

  figures counts() const {
    std::lock_guard lock(mutex_);
    return figures_;
  }

  // A segment of at least `size` bytes for the caller to fill and lend: a
  // free one, else a new one within the cap; null past the cap, which
  // counts a fallback.
  std::shared_ptr<segment> take(std::size_t size) {
    std::lock_guard lock(mutex_);
    auto now = clock::now();
    auto wanted = size_class(size);
    entry* best = nullptr;
    for (auto& e : entries_)
      if (!e.lent && e.held.use_count() == 1 && e.held->size() >= size &&
          e.held->size() <= 2 * wanted && (!best || e.held->size() < best->held->size()))
        best = &e;
    if (best) {
      best->lent = true;
      best->used = now;
      return best->held;
    }
    // Room: first what idles, then what is free at all.
    for (bool any : {false, true}) {
      if (figures_.bytes + wanted <= cap_) break;
      std::erase_if(entries_, [&](const entry& e) {
        bool drop = !e.lent && e.held.use_count() == 1 &&
                    (any || now - e.used > idle_limit) && figures_.bytes + wanted > cap_;
        if (drop) figures_.bytes -= e.held->size();
        return drop;
      });
    }
    if (figures_.bytes + wanted > cap_) {
      ++figures_.fallbacks;
      return nullptr;
    }
    auto made = segment::create(wanted);
    if (!made) {
      ++figures_.fallbacks;
      return nullptr;
    }
    figures_.bytes += wanted;
    entries_.push_back({made, true, now});
    release_idle(now);
    return made;
  }

  // This process's own segment `id` (come back in a peer's message), or null.
  std::shared_ptr<segment> own(const segment::identity& id) const {
    std::lock_guard lock(mutex_);
    for (const auto& e : entries_)
      if (e.held->id() == id) return e.held;
    return nullptr;
  }

  // A segment taken was lent with a message.
  void lent() {
    std::lock_guard lock(mutex_);
    ++figures_.lent;
  }

  // A taken segment is free again: its peer is done with it, or it never
  // left.
  void give_back(const segment& s) {
    std::lock_guard lock(mutex_);
    for (auto& e : entries_)
      if (e.held.get() == &s) {
        e.lent = false;
        e.used = clock::now();
      }
  }

  // A lent segment the peer keeps: forgotten here (its memory lives on in
  // the peer as long as it maps it).
  void give_away(const segment& s) {
    std::lock_guard lock(mutex_);
    std::erase_if(entries_, [&](const entry& e) {
      if (e.held.get() != &s) return false;
      figures_.bytes -= s.size();
      ++figures_.given_away;
      return true;
    });
  }

  // A segment of at least `size` bytes: in steps of a quarter of the power
  // of two below it (at most a quarter wasted), whole pages.
  static std::size_t size_class(std::size_t size) {
    std::size_t page = 4096, step = page;
    while (step * 8 <= size) step *= 2;
    return std::max(page, (size + step - 1) / step * step);
  }

 private:
  segment_pool() = default;

  struct entry {
    std::shared_ptr<segment> held;
    bool lent = false;  // taken, until given back
    clock::time_point used;
  };

  void release_idle(clock::time_point now) {
    std::erase_if(entries_, [&](const entry& e) {
      bool drop = !e.lent && e.held.use_count() == 1 && now - e.used > idle_limit;
      if (drop) figures_.bytes -= e.held->size();
      return drop;
    });
  }

  mutable std::mutex mutex_;
  std::vector<entry> entries_;
  std::size_t cap_ = std::size_t{256} << 20;
  figures figures_;
};

// One connection's segments, at either end: a client's connection to a
// node, or a node's connection from a caller. Used by one thread at a time,
// as its connection is.
class segment_exchange {
 public:
  segment_exchange() = default;
  segment_exchange(const segment_exchange&) = delete;
  segment_exchange& operator=(const segment_exchange&) = delete;
  // The connection ends: what this end lent is given away (the peer may
  // still read it), what it held of the peer's is let go.
  ~segment_exchange() {
    for (auto& s : lent_) pool().give_away(*s);
    if (pending_) pool().give_away(*pending_);
  }

  // Whether the peer reads segments in messages to it (it said so).
  bool peer_takes() const { return peer_takes_; }

  // ---- A message that came --------------------------------------------

  // Takes a message's head fields (`field` finds one by name, "" if
  // absent) and the descriptors that came with it, which it owns from now
  // on: maps them (a peer's segments, or this process's own come back),
  // and takes the peer's word on those this end lent with its last
  // message. Throws segment_error, every descriptor closed, if they are
  // not what the head announced or not segments at all.
  template <class Field>
  void received(Field field, std::vector<int>& fds, std::size_t largest) {
    peer_takes_ = field(bulk_field::bulk) == protocol::same_host::bulk_value;
    std::vector<arrival> came;
    std::string why;
    try {
      auto announced = count_of(field(bulk_field::segments));
      if (announced != fds.size())
        throw segment_error("the message announced " + std::to_string(announced) +
                            " segments (" + std::string(bulk_field::segments) +
                            ") and brought " + std::to_string(fds.size()) +
                            " descriptors");
      for (int& fd : fds) {
        arrival a;
        auto id = identity_of(fd);
        if (id && (a.held = lent_with_id(*id))) {
          a.home = true;  // lent by this end, and back
        } else if (id && ((a.held = pool().own(*id)) || (a.held = cached(*id)))) {
          // This process's own (its other end of a connection to itself), or
          // a peer's that this end has mapped already.
        } else {
          a.held = segment::adopt(std::exchange(fd, -1), largest);
          if (cache_.size() < max_cached) cache_[a.held->id()] = a.held;
        }
        if (fd >= 0) ::close(std::exchange(fd, -1));
        came.push_back(std::move(a));
      }
    } catch (const segment_error& e) {
      why = e.what();
    }
    for (int& fd : fds)
      if (fd >= 0) ::close(fd);
    fds.clear();
    settle(field(bulk_field::returned), came);
    received_.clear();
    views_.clear();
    if (!why.empty()) throw segment_error(why);
    received_ = std::move(came);
    for (auto& a : received_) {
      // What reads it in place holds the token, not the segment itself: a
      // segment other ends also hold tells whether this end still reads it.
      a.token = std::make_shared<std::shared_ptr<segment>>(a.held);
      views_.push_back({a.held->data(), a.held->size(), a.held->writable(),
                        std::shared_ptr<void>(a.token, a.held->data())});
    }
  }

  // The segments of the message that came last, for its reader.
  std::span<const cbor::segment_view> segments() const { return views_; }

  // ---- The next message from this end --------------------------------

  // The head lines of this end's next message: that it reads segments,
  // the segment pack() made for it, and which of the peer's last segments
  // it is done with. Call after pack(), and when no value
  // read from that message is still to be made (the reply's, a call's
  // arguments): a value that reads a segment in place keeps it, and then
  // it is not returned (the peer gives it away).
  void head_lines(std::string& out) {
    // With no shared memory of its own (--lp_shared_memory_mb=0) this end
    // takes none of the peer's either: every array goes through the socket.
    if (pool().cap() > 0) {
      out += bulk_field::bulk;
      out += ": ";
      out += protocol::same_host::bulk_value;
      out += "\r\n";
    }
    if (pending_) {
      out += bulk_field::segments;
      out += ": 1\r\n";
    }
    if (received_.empty()) return;
    out += bulk_field::returned;
    out += ": ";
    bool first = true;
    views_.clear();
    for (std::size_t i = 0; i < received_.size(); ++i) {
      auto& a = received_[i];
      if (a.home) continue;
      if (a.token.use_count() == 1) {  // nothing reads it in place
        if (!first) out += ',';
        out += std::to_string(i);
        first = false;
      } else if (auto it = cache_.find(a.held->id()); it != cache_.end()) {
        cache_.erase(it);  // kept here: never lent again
      }
    }
    out += "\r\n";
    received_.clear();
  }

  // Moves the bytes of `arrays` (of a body in `pieces`) into a segment of
  // this process's, where the peer reads segments: `out` is then the body
  // to send, with references in their place (whose bytes `scratch` holds),
  // and descriptor() the segment's. False (out untouched) where the peer
  // does not read segments, there is nothing to move or the pool is full.
  bool pack(std::span<const std::string_view> pieces,
            std::span<const cbor::bulk_array> arrays, std::vector<std::string_view>& out,
            std::string& scratch) {
    if (!peer_takes_ || arrays.empty() || pending_ || pool().cap() == 0) return false;
    std::size_t total = 0;
    for (const auto& a : arrays) total = aligned(total) + a.size;
    auto s = pool().take(total);
    if (!s) return false;
    scratch.clear();
    scratch.reserve(arrays.size() * 32);  // references never move once written
    out.clear();
    std::size_t at = 0, piece = 0, piece_at = 0;  // body position; piece and its start
    // The body's bytes [at, until), as views of its pieces.
    auto copy_through = [&](std::size_t until) {
      while (at < until) {
        while (piece_at + pieces[piece].size() <= at) piece_at += pieces[piece++].size();
        auto from = at - piece_at;
        auto n = std::min(until, piece_at + pieces[piece].size()) - at;
        out.push_back(pieces[piece].substr(from, n));
        at += n;
      }
    };
    // Where the body's bytes [from, from + n) are, copied into `to`.
    auto gather = [&](std::size_t from, std::size_t n, char* to) {
      std::size_t p = 0, p_at = 0;
      while (p_at + pieces[p].size() <= from) p_at += pieces[p++].size();
      while (n > 0) {
        auto offset = from - p_at;
        auto take = std::min(n, pieces[p].size() - offset);
        std::memcpy(to, pieces[p].data() + offset, take);
        to += take;
        from += take;
        n -= take;
        p_at += pieces[p++].size();
      }
    };
    std::size_t offset = 0;
    for (const auto& a : arrays) {
      offset = aligned(offset);
      gather(a.data_at, a.size, s->data() + offset);
      copy_through(a.head_at);
      auto start = scratch.size();
      cbor::head(scratch, 6, cbor::shared_bytes_tag);
      cbor::head(scratch, 4, 3);
      cbor::head(scratch, 0, 0);
      cbor::head(scratch, 0, offset);
      cbor::head(scratch, 0, a.size);
      out.push_back(std::string_view(scratch).substr(start));
      at = a.data_at + a.size;
      offset += a.size;
    }
    std::size_t end = 0;
    for (auto p : pieces) end += p.size();
    copy_through(end);
    pending_ = std::move(s);
    return true;
  }

  // The descriptor to send with the message pack() made; -1 if none.
  int descriptor() const { return pending_ ? pending_->fd() : -1; }

  // The message went (`sent`), its segment lent until the peer's next
  // message says; or it did not, and the segment may be half sent: given
  // away, never to be written again.
  void done(bool sent) {
    if (!pending_) return;
    if (sent) {
      lent_.push_back(std::move(pending_));
      pool().lent();
    } else {
      pool().give_away(*pending_);
    }
    pending_.reset();
  }

 private:
  // A peer lends this few segments at once; more are mapped for their
  // message only.
  static constexpr std::size_t max_cached = 16;

  static segment_pool& pool() { return segment_pool::of_process(); }

  static std::size_t aligned(std::size_t at) { return (at + 63) & ~std::size_t{63}; }

  static segment_error not_a_count() {
    return segment_error(std::string(bulk_field::segments) +
                         " is not a count of at most " + std::to_string(max_descriptors) +
                         " segments");
  }

  static std::size_t count_of(std::string_view text) {
    if (text.empty()) return 0;
    std::size_t n = 0;
    for (char c : text) {
      if (c < '0' || c > '9' || n > max_descriptors) throw not_a_count();
      n = n * 10 + static_cast<std::size_t>(c - '0');
    }
    if (n > max_descriptors) throw not_a_count();
    return n;
  }

  std::shared_ptr<segment> cached(const segment::identity& id) const {
    auto it = cache_.find(id);
    return it == cache_.end() ? nullptr : it->second;
  }

  // A segment that came with the peer's last message.
  struct arrival {
    std::shared_ptr<segment> held;
    std::shared_ptr<std::shared_ptr<segment>> token;  // what its readers hold
    bool home = false;  // this end's own, lent and sent back
  };

  std::shared_ptr<segment> lent_with_id(const segment::identity& id) const {
    for (const auto& s : lent_)
      if (s->id() == id) return s;
    return nullptr;
  }

  // The peer's word on what this end lent with its last message: those it
  // names in `returned`, or sent back in this message, are free again; the
  // others it keeps.
  void settle(std::string_view returned, const std::vector<arrival>& came) {
    std::vector<bool> back(lent_.size(), false);
    for (std::size_t from = 0; from < returned.size();) {
      auto comma = returned.find(',', from);
      if (comma == std::string_view::npos) comma = returned.size();
      std::size_t i = 0;
      bool number = comma > from;
      for (auto c : returned.substr(from, comma - from)) {
        if (c < '0' || c > '9' || i > lent_.size()) number = false;
        if (number) i = i * 10 + static_cast<std::size_t>(c - '0');
      }
      if (number && i < back.size()) back[i] = true;
      from = comma + 1;
    }
    for (const auto& a : came)
      if (a.home)
        for (std::size_t j = 0; j < lent_.size(); ++j)
          if (lent_[j] == a.held) back[j] = true;
    for (std::size_t i = 0; i < lent_.size(); ++i) {
      if (back[i])
        pool().give_back(*lent_[i]);
      else
        pool().give_away(*lent_[i]);
    }
    lent_.clear();
  }

  bool peer_takes_ = false;
  std::vector<std::shared_ptr<segment>> lent_;  // with this end's last message
  std::shared_ptr<segment> pending_;            // packed, for the message being sent
  std::vector<arrival> received_;               // with the peer's last message
  std::vector<cbor::segment_view> views_;       // of received_, for its reader
  std::map<segment::identity, std::shared_ptr<segment>> cache_;  // the peer's, mapped
};

}  // namespace lp::detail
