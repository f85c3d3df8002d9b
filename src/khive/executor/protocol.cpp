#include "khive/executor/protocol.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace khive::exec {

void send_message(int sock, const nlohmann::json& body, const std::vector<int>& fds) {
  const std::string data = body.dump();
  if (data.size() > kMaxMessage)
    throw ChannelError("message of " + std::to_string(data.size()) + " bytes is over the limit");
  if (fds.size() > kMaxFds) throw ChannelError("too many descriptors in one message");
  msghdr m{};
  iovec io{const_cast<char*>(data.data()), data.size()};
  m.msg_iov = &io;
  m.msg_iovlen = 1;
  std::vector<char> cbuf;
  if (!fds.empty()) {
    cbuf.assign(CMSG_SPACE(sizeof(int) * fds.size()), 0);
    m.msg_control = cbuf.data();
    m.msg_controllen = cbuf.size();
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  for (;;) {
    ssize_t r = ::sendmsg(sock, &m, MSG_NOSIGNAL);
    if (r >= 0) return;
    if (errno == EINTR) continue;
    throw ChannelError(std::string("send: ") + std::strerror(errno));
  }
}

namespace {

std::optional<Message> receive_flags(int sock, int flags) {
  std::string buf(kMaxMessage + 1, '\0');
  msghdr m{};
  iovec io{buf.data(), buf.size()};
  m.msg_iov = &io;
  m.msg_iovlen = 1;
  alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int) * kMaxFds)];
  m.msg_control = cbuf;
  m.msg_controllen = sizeof cbuf;
  ssize_t r;
  for (;;) {
    r = ::recvmsg(sock, &m, flags | MSG_CMSG_CLOEXEC);
    if (r >= 0 || errno != EINTR) break;
  }
  if (r < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return std::nullopt;
    const int e = errno;
    throw ChannelError(std::string("receive: ") + std::strerror(e), e == ECONNRESET || e == EPIPE || e == ENOTCONN);
  }
  Message msg;
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      const std::size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (std::size_t i = 0; i < n; ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
        msg.fds.push_back(fd);
      }
    }
  auto close_all = [&] {
    for (int fd : msg.fds) ::close(fd);
  };
  if (r == 0) {
    close_all();
    throw ChannelError("the peer closed the channel", true);
  }
  if ((m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || static_cast<std::size_t>(r) > kMaxMessage) {
    close_all();
    throw ChannelError("a message over the size limit (or with too many descriptors)");
  }
  msg.body = nlohmann::json::parse(buf.data(), buf.data() + r, nullptr, false);
  if (msg.body.is_discarded() || !msg.body.is_object()) {
    close_all();
    throw ChannelError("a message that is not a JSON object");
  }
  return msg;
}

}  // namespace

std::optional<Message> try_receive(int sock) { return receive_flags(sock, MSG_DONTWAIT); }

Message receive(int sock) {
  auto m = receive_flags(sock, 0);
  if (!m) throw ChannelError("receive: no message");
  return std::move(*m);
}

Setup parse_setup(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("backend"))
    throw std::invalid_argument("setup: expected a JSON object with a \"backend\"");
  return j.get<Setup>();
}

std::string to_hex(const void* p, std::size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<const unsigned char*>(p)[i];
    s += d[c >> 4];
    s += d[c & 15];
  }
  return s;
}

bool from_hex(const std::string& hex, void* out, std::size_t n) {
  if (hex.size() != 2 * n) return false;
  auto val = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < n; ++i) {
    int hi = val(hex[2 * i]), lo = val(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    static_cast<unsigned char*>(out)[i] = static_cast<unsigned char>(hi * 16 + lo);
  }
  return true;
}

}  // namespace khive::exec
