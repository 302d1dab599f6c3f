// afasim_http_baseline: the least HTTP server each library allows, serving fixed bytes, as
// the yardstick bench_http measures `afasim serve` against (docs/http-front-end.md).
//
//   afasim_http_baseline --library beast|httplib --port N --threads T PATH=FILE...
//
// Every GET of PATH answers 200 with FILE's bytes as application/json; anything else is 404.
// Beast: the same shape as http/server.cpp (Asio coroutines on T threads, TCP_NODELAY), with
// none of its checks. httplib: cpp-httplib 0.11's Server with T workers and TCP_NODELAY.
#include <httplib.h>

#include <utility>  // before Boost 1.74's asio/awaitable.hpp, which uses std::exchange without it

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

using Routes = std::map<std::string, std::string>;

asio::awaitable<void> beast_session(asio::ip::tcp::socket socket, const Routes& routes) {
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  for (;;) {
    bhttp::request<bhttp::string_body> req;
    boost::system::error_code ec;
    co_await bhttp::async_read(stream, buffer, req, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return;
    bhttp::response<bhttp::string_body> res{bhttp::status::ok, req.version()};
    auto it = routes.find(std::string(req.target()));
    if (it == routes.end()) {
      res.result(bhttp::status::not_found);
    } else {
      res.set(bhttp::field::content_type, "application/json");
      res.body() = it->second;
    }
    res.keep_alive(req.keep_alive());
    res.prepare_payload();
    co_await bhttp::async_write(stream, res, asio::redirect_error(asio::use_awaitable, ec));
    if (ec || !req.keep_alive()) co_return;
  }
}

asio::awaitable<void> beast_accept(asio::ip::tcp::acceptor& acceptor, const Routes& routes) {
  for (;;) {
    asio::ip::tcp::socket socket(asio::make_strand(acceptor.get_executor()));
    co_await acceptor.async_accept(socket, asio::use_awaitable);
    socket.set_option(asio::ip::tcp::no_delay(true));
    asio::co_spawn(socket.get_executor(), beast_session(std::move(socket), routes), asio::detached);
  }
}

int run_beast(int port, int threads, const Routes& routes) {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"),
                                        static_cast<unsigned short>(port)});
  asio::co_spawn(io, beast_accept(acceptor, routes), asio::detached);
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back([&io] { io.run(); });
  io.run();
  return 0;
}

int run_httplib(int port, int threads, const Routes& routes) {
  httplib::Server server;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server.set_tcp_nodelay(true);
  for (const auto& [path, body] : routes) {
    server.Get(path, [&body](const httplib::Request&, httplib::Response& res) {
      res.set_content(body, "application/json");
    });
  }
  return server.listen("127.0.0.1", port) ? 0 : 1;
}

int main(int argc, char** argv) {
  std::string library = "beast";
  int port = 0, threads = 2;
  Routes routes;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--library" && i + 1 < argc) {
      library = argv[++i];
    } else if (a == "--port" && i + 1 < argc) {
      port = std::atoi(argv[++i]);
    } else if (a == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (a.find('=') != std::string::npos) {
      std::ifstream in(a.substr(a.find('=') + 1), std::ios::binary);
      std::stringstream body;
      body << in.rdbuf();
      routes[a.substr(0, a.find('='))] = body.str();
    } else {
      std::cerr << "usage: afasim_http_baseline --library beast|httplib --port N --threads T "
                   "PATH=FILE...\n";
      return 2;
    }
  }
  if (port <= 0 || threads < 1 || (library != "beast" && library != "httplib")) {
    std::cerr << "afasim_http_baseline: need --port N > 0, --threads >= 1, --library beast|httplib\n";
    return 2;
  }
  return library == "beast" ? run_beast(port, threads, routes) : run_httplib(port, threads, routes);
}
