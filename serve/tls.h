// TLS material shared by the front ends (HTTPS in http/, NBD STARTTLS in nbd/): a server
// context from PEM files, and a self-signed certificate made on first use
// (`afasim serve --tls self-signed`). OpenSSL through Boost.Asio's ssl::context.
//
// Thread-safe: the functions share no state; a context, once made, is read-only and may be
// used by any number of connections on any thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/status.h"

namespace boost::asio::ssl {
class context;
}

namespace afasim::serve {

struct TlsFiles {
  std::string cert_file;  // PEM: the certificate, then any intermediates
  std::string key_file;   // PEM: its private key
};

// A TLS 1.2+ server context for `files`. kInvalidArgument naming the file and what is wrong
// when a file cannot be read, is a folder, is empty or larger than 1 MiB (/dev/zero), holds
// no PEM block ("not a PEM file"), or the key does not match the certificate. Never blocks on
// a FIFO that no one writes (it reads as empty).
sim::Result<std::shared_ptr<boost::asio::ssl::context>> server_tls_context(const TlsFiles& files);

// The self-signed certificate in `dir` (tls/afasim.crt and tls/afasim.key under it), made
// when missing: an ECDSA P-256 key (file mode 0600) and a certificate valid for 825 days
// (the CA/Browser Forum's old maximum) whose subjectAltName lists `names` (host names and
// IP addresses; localhost, 127.0.0.1 and ::1 are always added). Kept across restarts, so
// a client that trusted it once keeps trusting it. kIoError when it cannot be written.
sim::Result<TlsFiles> ensure_self_signed(const std::string& dir, std::vector<std::string> names);

}  // namespace afasim::serve
