#!/usr/bin/env bash
# Installs the Debian 12 packages afasim needs to build, test and run; `bootstrap.sh bench`
# adds what `make bench` alone needs, `bootstrap.sh fuzz` what `make fuzz` alone needs (a
# fresh machine running `make test` does not download them).
# Idempotent: when every package is already installed it only runs dpkg-query (well under
# a second) and installs nothing.
set -euo pipefail

profile=${1:-test}
case "$profile" in
  test | bench | fuzz) ;;
  *)
    echo "bootstrap: unknown profile '$profile' (test, bench or fuzz)" >&2
    exit 2
    ;;
esac

packages=(
  # build (lld: links in a third of GNU ld's time, docs/build.md)
  build-essential cmake ninja-build pkg-config lld
  # libraries (DESIGN.md: Boost.Asio, SQLite, cpp-httplib, nlohmann_json, doctest, CLI11, spdlog)
  libboost-dev libboost-system-dev libsqlite3-dev libcpp-httplib-dev nlohmann-json3-dev
  doctest-dev libcli11-dev libspdlog-dev libfmt-dev
  # GET /metrics (prometheus-cpp); the manager page's Chart.js and Bootstrap, embedded at build time
  prometheus-cpp-dev libjs-chart.js libjs-bootstrap5
  # real clients the integration tests drive
  curl sqlite3 fio libnbd-bin python3-libnbd qemu-utils
  # passwords (argon2id) and TLS
  libargon2-dev libssl-dev openssl
  # fio2gnuplot and fio_jsonplus_clat2csv (fio's tools, run on afasim's output) import six
  python3-six
  # promtool checks /metrics; headless Chromium driven by Selenium tests the manager page
  prometheus chromium chromium-driver python3-selenium
  # Redfish / Swordfish (issue 17): real clients and the schema validator the tests use
  redfishtool python3-sushy python3-jsonschema
  # the README tour pretty-prints JSON with python3 -m json.tool
  python3
  # `mpirun -np N afasim sweep` (issue 18, docs/sweeps.md): Open MPI's library and headers, and
  # mpirun for the test that runs a sweep over 4 ranks
  libopenmpi-dev openmpi-bin
)
case "$profile" in
  # bench_http drives the ReST server with wrk; bench_nbd compares with `nbdkit memory`
  bench) packages+=(wrk nbdkit) ;;
  # clang with libFuzzer, ASan and UBSan (tests/fuzz; `make test` replays the corpora with g++)
  fuzz) packages+=(clang libfuzzer-14-dev) ;;
esac

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "bootstrap: installing ${missing[*]}" >&2
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "bootstrap: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
