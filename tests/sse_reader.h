// A Server-Sent Events client for tests: reads one stream on a thread of its own (httplib),
// keeps what arrived, and knows when the server ended it.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace afasim::testing {

class SseReader {
 public:
  // GETs `path` on 127.0.0.1:`port`; `setup` sets the client's credentials and `headers` any
  // other header (X-Auth-Token).
  SseReader(int port, const std::string& path, const std::function<void(httplib::Client&)>& setup,
            httplib::Headers headers = {})
      : client_("127.0.0.1", port) {
    client_.set_read_timeout(60, 0);
    if (setup) setup(client_);
    thread_ = std::thread([this, path, headers] {
      client_.Get(path, headers, [this](const char* data, std::size_t n) {
        std::lock_guard<std::mutex> lock(mu_);
        text_.append(data, n);
        return !stop_.load();
      });
      ended_ = true;
    });
  }
  ~SseReader() {
    stop_ = true;
    client_.stop();
    thread_.join();
  }
  std::string text() const {
    std::lock_guard<std::mutex> lock(mu_);
    return text_;
  }
  // Waits up to `limit` of wall clock (a bound on a hang, not a speed assertion).
  bool wait_for(const std::string& needle, std::chrono::milliseconds limit = std::chrono::seconds(10)) const {
    return poll([&] { return text().find(needle) != std::string::npos; }, limit);
  }
  // True once the server ended the stream (the response is complete).
  bool wait_ended(std::chrono::milliseconds limit = std::chrono::seconds(10)) const {
    return poll([&] { return ended_.load(); }, limit);
  }
  bool ended() const { return ended_.load(); }

 private:
  static bool poll(const std::function<bool()>& done, std::chrono::milliseconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return done();
  }

  httplib::Client client_;
  mutable std::mutex mu_;
  std::string text_;
  std::atomic<bool> stop_{false}, ended_{false};
  std::thread thread_;
};

}  // namespace afasim::testing
