// ssd::Pipe: a transfer takes the idle time of the stage from its ready time on, earliest
// first. At 1 GB/s a byte is a nanosecond, so each expected time below is worked out by hand
// from the spans booked before it.
#include <doctest/doctest.h>

#include "ssd/pipe.h"

using namespace afasim;

TEST_CASE("a pipe's transfers fill idle gaps first, then queue after what is booked") {
  ssd::Pipe pipe(1e9, 1'000'000);
  CHECK(pipe.transfer(100, 1'000) == 1'100);    // idle: [100, 1100)
  CHECK(pipe.transfer(2'000, 1'000) == 3'000);  // after everything: [2000, 3000)
  CHECK(pipe.transfer(1'100, 500) == 1'600);    // the gap [1100, 2000), touching the first span
  CHECK(pipe.transfer(3'000, 100) == 3'100);    // touching the last: merged with it
  // Ready inside the first span: the rest of the gap [1600, 2000) (400 ns), then 1,600 ns
  // after the last span [2000, 3100).
  CHECK(pipe.transfer(500, 2'000) == 4'700);
  // Busy [100, 4700) in one span now: a transfer ready at 4,000 waits for its end.
  CHECK(pipe.transfer(4'000, 300) == 5'000);
  CHECK(pipe.transfer(6'000, 0) == 6'000);      // nothing to move
  // A gap between two spans, the new transfer ending before the second: its own span.
  CHECK(pipe.transfer(8'000, 1'000) == 9'000);  // [8000, 9000)
  CHECK(pipe.transfer(6'000, 500) == 6'500);    // [6000, 6500) before it
  CHECK(pipe.transfer(6'500, 1'500) == 8'000);  // exactly fills [6500, 8000)
  // Busy [100, 5000) and [6000, 9000) (the last three touch): the gap [5000, 6000), then
  // the other 2,000 ns after 9,000.
  CHECK(pipe.transfer(5'000, 3'000) == 11'000);
}

TEST_CASE("background transfers take only what foreground work leaves") {
  ssd::Pipe pipe(1e9, 1'000'000);
  CHECK(pipe.transfer(0, 1'000) == 1'000);
  CHECK(pipe.transfer(0, 500, true) == 1'500);  // behind the foreground transfer
  // Foreground work does not see the background's span: it goes at once after its own.
  CHECK(pipe.transfer(1'000, 200) == 1'200);
  // Background work sees both classes: [0, 1500) and [1000, 1200) are busy; and the 200 ns the
  // foreground transfer took from the background one's [1000, 1500) are owed: 100 + 200 ns.
  CHECK(pipe.transfer(1'000, 100, true) == 1'800);
}

TEST_CASE("over time a pipe carries no more than its rate, foreground over background included") {
  // Model review 30: a read-heavy mix on an SSD got its reads on top of the writes' full
  // program bandwidth (8K 70/30 at 544,000 IOPS, above both pure reads, 507,000, and pure
  // writes, 152,000), reads overcommitting channel time program data held. Each background
  // transfer books 1,000 ns; a foreground one of 500 ns lands inside it. 1,000 rounds carry
  // 1,500 µs of work, so the last end is at least 1,500,000 ns (without the debt: 1,000,000).
  ssd::Pipe pipe(1e9, 1'000'000);
  sim::Time end = 0;
  for (int i = 0; i < 1'000; ++i) {
    const sim::Time bg = pipe.transfer(end, 1'000, true);
    (void)pipe.transfer(bg - 1'000, 500);  // a read into the time the program data holds
    end = bg;
  }
  CHECK(end >= 1'499'000);
  CHECK(end <= 1'501'000);
}

TEST_CASE("a pipe's memory stays bounded however long it carries only background transfers") {
  // Hostile round 28: a write-only load's program data goes as background transfers, which
  // never advance the foreground horizon, so the spans given up at the kMaxSpans bound were
  // never freed: ~1.6 KB per 1 MiB written, a server's RSS 70 MB more every 96 GiB.
  ssd::Pipe pipe(1e9, 1'000'000);
  sim::Time ready = 0;
  for (int i = 0; i < 100'000; ++i) {
    (void)pipe.transfer(ready, 100, true);
    ready += 1'000;  // a gap each time: every transfer is a span of its own
  }
  CHECK(pipe.stored_spans() <= 4 * ssd::Pipe::kMaxSpans);
  // Foreground transfers keep it bounded too (they forget what is older than `keep`).
  for (int i = 0; i < 100'000; ++i) {
    (void)pipe.transfer(ready, 100);
    ready += 1'000;
  }
  CHECK(pipe.stored_spans() <= 4 * ssd::Pipe::kMaxSpans);
}

TEST_CASE("a pipe past kMaxSpans spans merges its oldest two, however its transfers are booked") {
  // Foreground transfers of one size onto an idle stage are booked inline (pipe.h); the 65th
  // span is past the bound, and the oldest two become one, their gap counted busy, as for any
  // transfer. Then a transfer ready inside that gap waits for the merged span's end.
  ssd::Pipe pipe(1e9, 1'000'000'000);  // nothing forgotten within the test
  for (int i = 0; i <= static_cast<int>(ssd::Pipe::kMaxSpans); ++i)
    CHECK(pipe.transfer(1'000 * i, 100) == 1'000 * i + 100);  // [1000 i, 1000 i + 100)
  // Busy [0, 1100) (merged), [2000, 2100), ...: ready at 150, the transfer waits until 1,100.
  CHECK(pipe.transfer(150, 100) == 1'200);
  // A transfer ready exactly when the last span ends is merged into it, then the next one
  // after it (its ready time is the latest one seen: nothing to forget).
  CHECK(pipe.transfer(64'100, 100) == 64'200);
  CHECK(pipe.transfer(64'100, 100) == 64'300);
}
