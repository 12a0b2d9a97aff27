#pragma once
// spinwise-calibrate --tune's link to a running MariaDB or MySQL server: a connection through
// Debian's client library (libmariadb), the few statements --tune sends, and whether an error lost
// the connection. Built without the library (SPINWISE_HAVE_LIBMARIADB unset), connect() says so.
#include <memory>
#include <string>

namespace spinwise::calibrate_tool {

// Where the server is and who connects. The password is never an option: MYSQL_PWD from the
// environment, else the [client] group of the option files (or of `defaults_file`).
struct server_address {
  std::string socket;         // a Unix socket; else host and port (TCP)
  std::string host;           // "" with a socket
  unsigned port = 0;          // 0: the client library's default
  std::string user;           // "": the option files', else the login name
  std::string defaults_file;  // "": the usual option files
};

class server_link {
 public:
  server_link();
  ~server_link();
  server_link(const server_link&) = delete;
  server_link& operator=(const server_link&) = delete;

  // Whether this build has the client library (without it, connect() fails saying so).
  static bool available() noexcept;

  // Connects (closing any earlier connection), with short connect, read and write timeouts so a
  // server that stopped answering is an error, not a hang. False with `why` set.
  bool connect(const server_address& a, std::string& why);
  // A statement with no result set (SET GLOBAL).
  bool execute(const std::string& sql, std::string& why);
  // The first row's column `column` of a statement's result (SELECT, SHOW): false with `why` when
  // the statement fails; `found` false when it returns no row (a variable the server does not have).
  bool value(const std::string& sql, std::string& out, bool& found, std::string& why, unsigned column = 0);
  // Whether the last error lost the connection (the server went away, was killed or stopped
  // answering), as opposed to a refused statement.
  bool lost() const noexcept { return lost_; }
  bool connected() const noexcept;

 private:
  // Sends a statement; false with `why` (and lost_) set when it failed.
  bool send(const std::string& sql, std::string& why);
  struct impl;
  std::unique_ptr<impl> p_;
  bool lost_ = false;
};

}  // namespace spinwise::calibrate_tool
