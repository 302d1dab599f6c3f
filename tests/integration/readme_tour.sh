#!/usr/bin/env bash
# Runs the README's five-minute tour, as written, against a fresh `afasim serve` (on a free
# port instead of 8080), then checks what the tour should have left behind.
set -euo pipefail
binary=${AFASIM_BINARY:?AFASIM_BINARY is not set}
readme=${AFASIM_SOURCE_DIR:?}/README.md
work=$(mktemp -d)
trap 'kill -INT $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$work"' EXIT

"$binary" serve --state "$work/state" --listen 127.0.0.1:0 --nbd-listen 127.0.0.1:0 --pace none >"$work/serve.log" 2>&1 &
pid=$!
for _ in $(seq 200); do
  port=$(grep -oE 'listening on http://127\.0\.0\.1:[0-9]+' "$work/serve.log" | grep -oE '[0-9]+$' || true)
  [[ -n "$port" ]] && break
  sleep 0.05
done
[[ -n "$port" ]] || { cat "$work/serve.log"; echo "afasim serve did not start"; exit 1; }

# The first sh block after the tour's heading, with the port swapped in.
awk '/^## A five-minute tour/{t=1} t && /^```sh/{b=1; next} b && /^```/{exit} b' "$readme" |
  sed -e "s/localhost:8080/localhost:$port/g" -e "s#var/afasim#$work/state#g" >"$work/tour.sh"
[[ $(wc -l <"$work/tour.sh") -gt 10 ]] || { echo "tour block not found in README.md"; exit 1; }
bash -eu "$work/tour.sh" >"$work/tour.out" 2>&1 || { cat "$work/tour.out"; echo "the tour failed"; exit 1; }

api=http://127.0.0.1:$port/api/v1
credentials="admin:$(cat "$work/state/admin-password")"
check() { # check DESCRIPTION PATH PYTHON-EXPRESSION-ON-j
  curl -sf -u "$credentials" "$api$2" | python3 -c "import json,sys; j=json.load(sys.stdin); assert ($3), '$1'" ||
    { echo "tour result wrong: $1"; cat "$work/tour.out"; exit 1; }
}
check "two volumes" /volumes "j['total'] == 2"
check "one host with its initiator" /hosts "j['total'] == 1 and j['items'][0]['initiators'][0]['type'] == 'fc'"
check "db01 mapped as LUN 0" /mappings "j['total'] == 1 and j['items'][0]['lun'] == 0"
check "the fixed volume allocated" /pools/1 "j['capacity']['allocated_bytes'] == 100 * 2**30"
check "three faults injected" /faults "j['total'] == 3 and [i['type'] for i in j['items']].count('drive_fail') == 1"
check "power back on after the power cycle" /system "j['power']['state'] == 'on' and j['power']['mains'] == 'on'"
grep -q '"status":422' "$work/tour.out" || { echo "the min>max request did not answer 422"; exit 1; }
grep -q '"status":409' "$work/tour.out" || { echo "deleting a mapped volume did not answer 409"; exit 1; }
grep -qx 'anonymous DELETE: 401' "$work/tour.out" || { echo "the request without credentials did not answer 401"; exit 1; }
grep -qx 'monitor DELETE: 403' "$work/tour.out" || { echo "the monitor's DELETE did not answer 403"; exit 1; }
grep -q '^admin user "watcher" created' "$work/tour.out" || { echo "the events do not name admin"; cat "$work/tour.out"; exit 1; }
[[ $(stat -c %a "$work/state/admin-password") == 600 ]] || { echo "admin-password is not mode 0600"; exit 1; }
# The tour's "Look at it" block: the client commands and /metrics, against the same array.
awk '/^### Look at it/{t=1} t && /^```sh/{b=1; next} b && /^```/{exit} b' "$readme" |
  sed "s/localhost:8080/localhost:$port/g; s#var/afasim#$work/state#g; s#build/app/afasim#AFASIM_URL=http://127.0.0.1:$port $binary#g" >"$work/look.sh"
[[ $(wc -l <"$work/look.sh") -gt 4 ]] || { echo "the Look at it block not found in README.md"; exit 1; }
bash -eu -o pipefail "$work/look.sh" >"$work/look.out" 2>&1 || { cat "$work/look.out"; echo "Look at it failed"; exit 1; }
look() { # look DESCRIPTION EXTENDED-REGEX
  grep -qE "$2" "$work/look.out" || { echo "Look at it: $1"; cat "$work/look.out"; exit 1; }
}
look "volume list shows db01 and logs" '^ *1 +db01 +1 +2 TiB +RAID10 +thin'
look "volume show prints the fixed volume" '^logs online 107374182400$'
look "deleting a mapped volume is refused with exit code 3" 'refused, exit code 3'
look "the metrics endpoint counts logs' reads" '^afasim_volume_ios_total\{volume_id="2",volume="logs",op="read"\} [0-9]'
echo "README tour: ok"
