// spinwise-calibrate --tune's server link (tune_server.hpp) over libmariadb, Debian's MariaDB
// client library (libmariadb-dev), which speaks to MySQL servers too.
#include "tune_server.hpp"

#include <cstdlib>

#ifdef SPINWISE_HAVE_LIBMARIADB
#include <errmsg.h>
#include <mysql.h>
#endif

namespace spinwise::calibrate_tool {

#ifdef SPINWISE_HAVE_LIBMARIADB

struct server_link::impl {
  MYSQL* m = nullptr;
  void close() {
    if (m != nullptr) mysql_close(m);
    m = nullptr;
  }
  ~impl() { close(); }
};

namespace {

// The timeouts, in seconds: a statement of --tune answers in milliseconds on a live server.
constexpr unsigned kConnectTimeoutS = 5;
constexpr unsigned kReadWriteTimeoutS = 10;

bool is_lost(unsigned code) {
  return code == CR_SERVER_GONE_ERROR || code == CR_SERVER_LOST || code == CR_CONNECTION_ERROR ||
         code == CR_CONN_HOST_ERROR;
}

}  // namespace

server_link::server_link() : p_(new impl) {}
server_link::~server_link() = default;
bool server_link::available() noexcept { return true; }
bool server_link::connected() const noexcept { return p_->m != nullptr && !lost_; }

bool server_link::connect(const server_address& a, std::string& why) {
  p_->close();
  lost_ = false;
  p_->m = mysql_init(nullptr);
  if (p_->m == nullptr) {
    why = "the client library could not allocate a connection";
    return false;
  }
  MYSQL* m = p_->m;
  mysql_optionsv(m, MYSQL_READ_DEFAULT_GROUP, "client");
  if (!a.defaults_file.empty()) mysql_optionsv(m, MYSQL_READ_DEFAULT_FILE, a.defaults_file.c_str());
  const unsigned connect_s = kConnectTimeoutS, rw_s = kReadWriteTimeoutS;
  mysql_optionsv(m, MYSQL_OPT_CONNECT_TIMEOUT, &connect_s);
  mysql_optionsv(m, MYSQL_OPT_READ_TIMEOUT, &rw_s);
  mysql_optionsv(m, MYSQL_OPT_WRITE_TIMEOUT, &rw_s);
  unsigned protocol = a.socket.empty() ? MYSQL_PROTOCOL_TCP : MYSQL_PROTOCOL_SOCKET;
  mysql_optionsv(m, MYSQL_OPT_PROTOCOL, &protocol);
  const char* password = std::getenv("MYSQL_PWD");  // null: the option files' password
  const char* host = a.socket.empty() ? (a.host.empty() ? "127.0.0.1" : a.host.c_str()) : "localhost";
  if (mysql_real_connect(m, host, a.user.empty() ? nullptr : a.user.c_str(), password, nullptr, a.port,
                         a.socket.empty() ? nullptr : a.socket.c_str(), 0) == nullptr) {
    why = mysql_error(m);
    lost_ = true;
    p_->close();
    return false;
  }
  return true;
}

bool server_link::send(const std::string& sql, std::string& why) {
  if (p_->m == nullptr) {
    why = "not connected";
    lost_ = true;
    return false;
  }
  if (mysql_real_query(p_->m, sql.data(), sql.size()) != 0) {
    why = mysql_error(p_->m);
    lost_ = is_lost(mysql_errno(p_->m));
    return false;
  }
  return true;
}

bool server_link::execute(const std::string& sql, std::string& why) {
  if (!send(sql, why)) return false;
  if (MYSQL_RES* r = mysql_store_result(p_->m); r != nullptr) mysql_free_result(r);
  return true;
}

bool server_link::value(const std::string& sql, std::string& out, bool& found, std::string& why,
                        unsigned column) {
  found = false;
  if (!send(sql, why)) return false;
  MYSQL_RES* r = mysql_store_result(p_->m);
  if (r == nullptr) {
    if (mysql_errno(p_->m) != 0) {
      why = mysql_error(p_->m);
      lost_ = is_lost(mysql_errno(p_->m));
      return false;
    }
    return true;  // no result set
  }
  if (MYSQL_ROW row = mysql_fetch_row(r); row != nullptr && column < mysql_num_fields(r)) {
    const unsigned long* len = mysql_fetch_lengths(r);
    out.assign(row[column] != nullptr ? row[column] : "", row[column] != nullptr ? len[column] : 0);
    found = true;
  }
  mysql_free_result(r);
  return true;
}

#else  // built without libmariadb

struct server_link::impl {};
server_link::server_link() : p_(new impl) {}
server_link::~server_link() = default;
bool server_link::available() noexcept { return false; }
bool server_link::connected() const noexcept { return false; }
bool server_link::connect(const server_address&, std::string& why) {
  why =
      "this spinwise-calibrate was built without libmariadb (Debian: libmariadb-dev; tools/setup.sh installs "
      "it)";
  return false;
}
bool server_link::execute(const std::string&, std::string& why) {
  why = "not connected";
  return false;
}
bool server_link::value(const std::string&, std::string&, bool& found, std::string& why, unsigned) {
  found = false;
  why = "not connected";
  return false;
}

#endif

}  // namespace spinwise::calibrate_tool
