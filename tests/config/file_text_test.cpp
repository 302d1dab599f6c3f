// config::printable: what a user's file holds, printed back without its control characters
// (hostile round 23: a trace's device field set the terminal's title and cleared its screen);
// open_file_stream's stop flag; compression_of.
#include "config/file_text.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <thread>

namespace afasim::config {
namespace {

TEST_CASE("printable escapes control characters, C1 controls included, and keeps other UTF-8") {
  CHECK(printable("sdb") == "sdb");
  CHECK(printable("\x1b]0;pwned\x07\x1b[31mRED") == "\\x1b]0;pwned\\x07\\x1b[31mRED");
  CHECK(printable(std::string("a\0b\x7f", 4)) == "a\\x00b\\x7f");
  CHECK(printable("\xc2\x9b" "2J") == "\\xc2\\x9b2J");  // U+009B, the 8-bit CSI
  CHECK(printable("delay (\xc2\xb5s)") == "delay (\xc2\xb5s)");  // µ stays
  // What prints as nothing or reorders the line is escaped (hostile review 43: a second BOM in
  // a field read "Timestamp"): the BOM, a zero-width space, a right-to-left override, a soft
  // hyphen. An ordinary character of the same lengths stays.
  CHECK(printable("\xef\xbb\xbfTimestamp") == "\\xef\\xbb\\xbfTimestamp");
  CHECK(printable("a\xe2\x80\x8b" "b") == "a\\xe2\\x80\\x8b" "b");
  CHECK(printable("x\xe2\x80\xaeyz") == "x\\xe2\\x80\\xaeyz");
  CHECK(printable("co\xc2\xad" "op") == "co\\xc2\\xad" "op");
  CHECK(printable("\xe2\x82\xac 5") == "\xe2\x82\xac 5");  // € stays
  CHECK(printable("\xc2") == "\\xc2");  // a cut sequence: not read past the end, escaped
  CHECK(printable("\x9b" "2J") == "\\x9b2J");  // a lone 8-bit CSI (review, round 23)
  CHECK(printable("\xe2\x82\xac \xf0\x9f\x92\xbe") == "\xe2\x82\xac \xf0\x9f\x92\xbe");  // € and a 4-byte one stay
  // The line and paragraph separators, the Mongolian vowel separator and a tag character
  // (re-test of round 44: printed raw).
  CHECK(printable("a\xe2\x80\xa8" "b\xe2\x80\xa9") == "a\\xe2\\x80\\xa8" "b\\xe2\\x80\\xa9");
  CHECK(printable("\xe1\xa0\x8e") == "\\xe1\\xa0\\x8e");
  CHECK(printable("x\xf3\xa0\x81\x81") == "x\\xf3\\xa0\\x81\\x81");  // U+E0041, TAG LATIN CAPITAL LETTER A
}

TEST_CASE("a stream whose pipe's writer is silent ends once its stop flag is set, with what came before") {
  // Review 32: `afasim trace -` waited out SIGTERM until the writer closed the pipe.
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  REQUIRE(::write(fds[1], "line one\n", 9) == 9);
  std::atomic<bool> stop{false};
  auto in = open_file_stream("/dev/fd/" + std::to_string(fds[0]), &stop);
  REQUIRE(in.is_ok());
  std::string line;
  REQUIRE(std::getline(**in, line));
  CHECK(line == "line one");
  const auto start = std::chrono::steady_clock::now();
  std::thread stopper([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop = true;
  });
  CHECK_FALSE(std::getline(**in, line));  // the writer is still there, silent
  stopper.join();
  const auto waited = std::chrono::steady_clock::now() - start;
  CHECK(waited >= std::chrono::milliseconds(200));
  CHECK(waited < std::chrono::seconds(5));
  CHECK((*in)->eof());
  CHECK_FALSE((*in)->bad());
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST_CASE("a source that never runs dry (/dev/zero) ends once its stop flag is set") {
  // Hostile round 37: `afasim trace /dev/zero --skip-bad` skipped its one endless line for
  // minutes after SIGTERM: the flag was read only while waiting for data.
  std::atomic<bool> stop{false};
  auto in = open_file_stream("/dev/zero", &stop);
  REQUIRE(in.is_ok());
  std::thread stopper([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop = true;
  });
  const auto start = std::chrono::steady_clock::now();
  (*in)->ignore(std::numeric_limits<std::streamsize>::max(), '\n');  // no newline ever comes
  stopper.join();
  const auto waited = std::chrono::steady_clock::now() - start;
  CHECK(waited >= std::chrono::milliseconds(200));
  CHECK(waited < std::chrono::seconds(5));
  CHECK((*in)->eof());
}

TEST_CASE("a FIFO read with a stop flag waits for its first writer, as cat does; without one it is empty") {
  // Hostile round 37: `mkfifo p; afasim trace p` before the writer opened p said "the trace is
  // empty" (a live `blkparse -o p` into a FIFO is a trace's natural source).
  const std::string fifo = (std::filesystem::temp_directory_path() / ("afasim-fifo-" + std::to_string(::getpid()))).string();
  std::filesystem::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::atomic<bool> stop{false};
  auto in = open_file_stream(fifo, &stop);
  REQUIRE(in.is_ok());
  std::thread writer([&fifo] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::ofstream(fifo) << "first line\n";
  });
  std::string line;
  CHECK(std::getline(**in, line));
  CHECK(line == "first line");
  writer.join();
  CHECK_FALSE(std::getline(**in, line));  // the writer has gone: the end
  // A writer that comes and goes without a byte: the end, not a wait for ever.
  auto again = open_file_stream(fifo, &stop);
  REQUIRE(again.is_ok());
  std::thread quiet([&fifo] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::ofstream{fifo};
  });
  CHECK_FALSE(std::getline(**again, line));
  quiet.join();
  // Nobody at all: the stop flag ends the wait.
  auto nobody = open_file_stream(fifo, &stop);
  REQUIRE(nobody.is_ok());
  std::thread stopper([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop = true;
  });
  CHECK_FALSE(std::getline(**nobody, line));
  stopper.join();
  // Without a flag nothing could end the wait: empty at once (hostile round 17).
  auto unflagged = open_file_stream(fifo, nullptr);
  REQUIRE(unflagged.is_ok());
  CHECK_FALSE(std::getline(**unflagged, line));
  // read_file_text (a scenario, a job file) says what the empty read was (hostile round 44:
  // "invalid JSON: unexpected end of input"); with its writer it reads what it wrote.
  const auto lonely = read_file_text(fifo, 1 << 20);
  REQUIRE_FALSE(lonely.is_ok());
  CHECK(lonely.status().message() == "cannot read " + fifo + ": a FIFO with no writer (start its writer first) or an empty one");
  std::thread feeder([&fifo] { std::ofstream(fifo) << "{}\n"; });  // blocks until the read opens
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto fed = read_file_text(fifo, 1 << 20);
  feeder.join();
  CHECK((fed.is_ok() && *fed == "{}\n"));
  std::filesystem::remove(fifo);
}

TEST_CASE("compression_of names gzip, xz, zstd and bzip2 data, and nothing else") {
  CHECK(compression_of(std::string("\x1f\x8b\x08\x00", 4)) == "gzip");
  CHECK(compression_of("\xfd" "7zXZ" + std::string(1, '\0')) == "xz");
  CHECK(compression_of("\x28\xb5\x2f\xfd") == "zstd");
  CHECK(compression_of("BZh91AY&SY") == "bzip2");
  CHECK(compression_of("BZh is a word") == "");
  CHECK(compression_of("fio version 3 iolog") == "");
  CHECK(compression_of("") == "");
}

}  // namespace
}  // namespace afasim::config
