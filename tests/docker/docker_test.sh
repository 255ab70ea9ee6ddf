#!/usr/bin/env bash
# End-to-end container test: builds docker/Dockerfile and docker/Dockerfile.nginx with podman,
# starts docker/compose.yaml with podman-compose on a free 127.0.0.1 port, checks the service
# through nginx, then stops everything and removes what it created.
#
# Needs root (CI is root). Installs podman, buildah, debootstrap, runc and podman-compose with
# apt-get when missing. Skips (exit 0, "skipped: ...") only when not root or podman cannot be
# installed. Prints `ok - ...` / `not ok - ...` per check, then `N passed, M failed`; exits 1 on
# any failure. Keeps the images (layer cache for the next run) and the base image tag.
#
# Env: GPUCOST_TEST_KEEP=1 restarts the stack after the stop checks and leaves it running for
#      debugging (no cleanup; the containers.conf path to use is printed);
#      GPUCOST_TEST_PORT=NNNNN forces the published port.
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
COMPOSE_FILE="$REPO/docker/compose.yaml"
GPUCOST_IMAGE=localhost/gpucost:latest
NGINX_IMAGE=localhost/gpucost-nginx:latest
T_START=$SECONDS

passed=0
failed=0
ok()     { passed=$((passed + 1)); echo "ok - $*"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $*"; }
note()   { echo "# $*"; }
summary() { echo "$passed passed, $failed failed"; }

# ---------------------------------------------------------------------------------------------
# Preconditions
if [[ $EUID -ne 0 ]]; then
  echo "skipped: tests/docker/docker_test.sh needs root (podman networking, debootstrap)"
  exit 0
fi

need_pkgs=()
for pair in podman:podman buildah:buildah debootstrap:debootstrap runc:runc \
            podman-compose:podman-compose curl:curl nft:nftables ss:iproute2; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || need_pkgs+=("${pair#*:}")
done
if ((${#need_pkgs[@]})); then
  note "installing ${need_pkgs[*]}"
  t=$SECONDS
  export DEBIAN_FRONTEND=noninteractive
  aptlog="$(mktemp)"
  # (with Recommends: netavark, aardvark-dns, catatonit, slirp4netns come that way)
  { apt-get update -q && apt-get install -y -q "${need_pkgs[@]}" podman buildah runc; } \
    >"$aptlog" 2>&1 || tail -n 20 "$aptlog" | sed 's/^/#   /'
  rm -f "$aptlog"
  note "apt-get: $((SECONDS - t)) s"
fi
if ! command -v podman >/dev/null 2>&1; then
  echo "skipped: podman is not installed and could not be installed with apt-get"
  exit 0
fi
for c in buildah debootstrap runc podman-compose curl nft ss; do
  command -v "$c" >/dev/null 2>&1 || { not_ok "required tool '$c' is available"; summary; exit 1; }
done

TMP="$(mktemp -d /tmp/gpucost-docker-test.XXXXXX)"
# runc instead of crun (hybrid cgroups here) and explicit ulimits (no CAP_SYS_RESOURCE; conmon
# caps nproc at 32768): see shared docs container-and-http-baseline.md.
cat >"$TMP/containers.conf" <<'EOF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
EOF
export CONTAINERS_CONF="$TMP/containers.conf"
export BUILDAH_FORMAT=docker          # keep HEALTHCHECK (dropped by the OCI image format)
export BUILDAH_LAYERS=true

PROJECT="gpucosttest$$"               # podman-compose: containers <project>_<service>_1
NETWORK="${PROJECT}_default"
CTR_GPUCOST="${PROJECT}_gpucost_1"
CTR_NGINX="${PROJECT}_nginx_1"
COMPOSE=(podman-compose -p "$PROJECT" -f "$COMPOSE_FILE")

nft_tables() { nft list tables 2>/dev/null | sort; }
NFT_BEFORE="$(nft_tables)"
network_existed=0
podman network exists "$NETWORK" 2>/dev/null && network_existed=1

cleanup_done=0
cleanup() {
  ((cleanup_done)) && return
  cleanup_done=1
  if [[ "${GPUCOST_TEST_KEEP:-0}" == 1 ]]; then
    podman start "$CTR_GPUCOST" >/dev/null 2>&1 && podman start "$CTR_NGINX" >/dev/null 2>&1
    note "GPUCOST_TEST_KEEP=1: $PROJECT left running on ${BASE:-?}; use CONTAINERS_CONF=$CONTAINERS_CONF"
    note "remove with: podman rm -f $CTR_NGINX $CTR_GPUCOST && podman network rm $NETWORK"
    return
  fi
  local ids
  ids="$(podman ps -aq --filter "label=io.podman.compose.project=$PROJECT" 2>/dev/null)"
  if [[ -n "$ids" ]]; then
    # shellcheck disable=SC2086
    podman stop -t 5 $ids >/dev/null 2>&1
    # shellcheck disable=SC2086
    podman rm -f $ids >/dev/null 2>&1
  fi
  if ((!network_existed)) && podman network exists "$NETWORK" 2>/dev/null; then
    podman network rm -f "$NETWORK" >/dev/null 2>&1
  fi
  # nftables tables that netavark created during this run (ip nat / ip filter): drop them once
  # no container is left running and they hold only base chains and NETAVARK* chains.
  if [[ -z "$(podman ps -q 2>/dev/null)" ]]; then
    local fam name chains
    while read -r _ fam name; do
      [[ -n "$name" ]] || continue
      grep -qxF "table $fam $name" <<<"$NFT_BEFORE" && continue
      chains="$(nft list table "$fam" "$name" 2>/dev/null | awk '$1 == "chain" {print $2}')"
      if ! grep -vqE '^(NETAVARK[A-Z0-9_-]*|INPUT|OUTPUT|FORWARD|PREROUTING|POSTROUTING)$' <<<"$chains"; then
        nft delete table "$fam" "$name" 2>/dev/null && note "removed nftables table $fam $name"
      fi
    done < <(nft_tables)
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'echo "# interrupted"; exit 130' INT TERM HUP

# A free high port on 127.0.0.1.
pick_port() {
  local p
  if [[ -n "${GPUCOST_TEST_PORT:-}" ]]; then echo "$GPUCOST_TEST_PORT"; return; fi
  for _ in $(seq 1 50); do
    p=$((20000 + RANDOM % 40000))
    [[ -z "$(ss -Htln "sport = :$p" 2>/dev/null)" ]] && { echo "$p"; return; }
  done
  echo 28080
}
PORT="$(pick_port)"
export GPUCOST_HTTP_PORT="$PORT"
BASE="http://127.0.0.1:$PORT"

# run_logged NAME TIMEOUT CMD...: runs CMD with its output in $TMP/NAME.log; on failure shows the tail.
run_logged() {
  local name="$1" limit="$2"; shift 2
  if timeout "$limit" "$@" >"$TMP/$name.log" 2>&1; then return 0; fi
  echo "# --- last lines of $name ---"; tail -n 40 "$TMP/$name.log" | sed 's/^/#   /'
  return 1
}

fatal_stop() { not_ok "$1"; summary; exit 1; }

# ---------------------------------------------------------------------------------------------
# Images
# step NAME TIMEOUT DESCRIPTION CMD...: a check that must pass for the rest to make sense.
step() {
  local name="$1" limit="$2" what="$3" t=$SECONDS; shift 3
  if run_logged "$name" "$limit" "$@"; then ok "$what ($((SECONDS - t)) s)"
  else fatal_stop "$what"; fi
}
step base-image 300 "docker/make-base-image.sh: localhost/debian:bookworm is present" \
  "$REPO/docker/make-base-image.sh"
step build-gpucost 900 "docker/Dockerfile builds $GPUCOST_IMAGE" \
  podman build --layers --format docker -f "$REPO/docker/Dockerfile" -t "$GPUCOST_IMAGE" "$REPO"
step build-nginx 300 "docker/Dockerfile.nginx builds $NGINX_IMAGE" \
  podman build --layers --format docker -f "$REPO/docker/Dockerfile.nginx" -t "$NGINX_IMAGE" "$REPO"
for img in localhost/debian:bookworm "$NGINX_IMAGE" "$GPUCOST_IMAGE"; do
  note "image size: $img $(podman image inspect --format '{{.Size}}' "$img" 2>/dev/null \
    | awk '{printf "%.1f MB", $1 / 1e6}')"
done

# ---------------------------------------------------------------------------------------------
# Start
step compose-up 180 "podman-compose up (project $PROJECT, nginx on 127.0.0.1:$PORT)" \
  "${COMPOSE[@]}" up -d --no-build

t=$SECONDS
ready=0
for _ in $(seq 1 120); do       # <= 60 s
  if curl -fsS -m 2 -o /dev/null "$BASE/healthz" 2>/dev/null; then ready=1; break; fi
  sleep 0.5
done
if ((ready)); then
  ok "service is ready through nginx within $((SECONDS - t)) s"
else
  not_ok "service is ready through nginx within 60 s"
  podman ps -a --filter "label=io.podman.compose.project=$PROJECT" | sed 's/^/#   /'
  for c in "$CTR_GPUCOST" "$CTR_NGINX"; do
    echo "# --- logs of $c ---"; podman logs --tail 30 "$c" 2>&1 | sed 's/^/#   /'
  done
  summary; exit 1
fi

# ---------------------------------------------------------------------------------------------
# HTTP checks through nginx. req METHOD PATH [curl args...] -> sets STATUS, CTYPE, BODY, HDRS.
req() {
  local method="$1" path="$2"; shift 2
  : >"$TMP/body"; : >"$TMP/hdrs"
  STATUS="$(curl -sS -m 10 -X "$method" -o "$TMP/body" -D "$TMP/hdrs" -w '%{http_code}' "$@" \
             "$BASE$path" 2>"$TMP/curl.err")" || STATUS="curl-error:$(head -c 200 "$TMP/curl.err")"
  CTYPE="$(grep -i '^content-type:' "$TMP/hdrs" | tail -n1 | cut -d: -f2- | tr -d ' \r')"
  BODY="$(head -c 4000 "$TMP/body")"
  HDRS="$(tr -d '\r' <"$TMP/hdrs")"
}
describe() { echo "(got status $STATUS, content-type '$CTYPE', body: ${BODY:0:160})"; }

req GET /healthz
if [[ "$STATUS" == 200 && "$CTYPE" == application/json* ]] && grep -q '"status"[[:space:]]*:[[:space:]]*"ok"' <<<"$BODY"; then
  ok "GET /healthz is 200 application/json with status ok"
else not_ok "GET /healthz is 200 application/json with status ok $(describe)"; fi

req GET /readyz
if [[ "$STATUS" == 200 ]]; then ok "GET /readyz is 200"
else not_ok "GET /readyz is 200 $(describe)"; fi

req GET /v1/accelerators
if [[ "$STATUS" == 200 && "$CTYPE" == application/json* ]] && grep -q '"h100-sxm"' <<<"$(cat "$TMP/body")"; then
  ok "GET /v1/accelerators is 200 JSON and lists h100-sxm"
else not_ok "GET /v1/accelerators is 200 JSON and lists h100-sxm $(describe)"; fi

req GET '/v1/offerings?provider=aws'
if [[ "$STATUS" == 200 && "$CTYPE" == application/json* ]]; then ok "GET /v1/offerings?provider=aws is 200 JSON"
else not_ok "GET /v1/offerings?provider=aws is 200 JSON $(describe)"; fi

req GET /v1/no-such-route
if [[ "$STATUS" == 404 && "$CTYPE" == application/problem+json* ]]; then
  ok "unknown route is 404 application/problem+json"
else not_ok "unknown route is 404 application/problem+json $(describe)"; fi

head -c 102400 /dev/zero | tr '\0' 'a' >"$TMP/big"
req POST /v1/offerings -H 'Content-Type: application/json' --data-binary "@$TMP/big"
if [[ "$STATUS" == 413 && "$CTYPE" == application/problem+json* ]] && grep -q '"status":413' <<<"$BODY"; then
  ok "100 KiB POST body is refused by nginx with 413 application/problem+json"
else not_ok "100 KiB POST body is refused by nginx with 413 application/problem+json $(describe)"; fi

req POST /v1/offerings -H 'Content-Type: application/json' -H 'Content-Encoding: gzip' --data-binary '{}'
if [[ "$STATUS" == 415 && "$CTYPE" == application/problem+json* ]]; then
  ok "request with Content-Encoding is refused by nginx with 415 application/problem+json"
else not_ok "request with Content-Encoding is refused by nginx with 415 application/problem+json $(describe)"; fi

req GET /v1/accelerators -H 'Range: bytes=0-9'
if [[ "$STATUS" == 200 ]]; then ok "Range header is stripped by nginx (GET /v1/accelerators stays 200, not 206)"
else not_ok "Range header is stripped by nginx (GET /v1/accelerators stays 200, not 206) $(describe)"; fi

req GET /healthz -H 'X-Request-Id: e2e-test-42'
if grep -qi '^x-request-id: e2e-test-42$' <<<"$HDRS"; then ok "X-Request-Id is passed through and echoed"
else not_ok "X-Request-Id is passed through and echoed (headers: $(tr '\n' ' ' <<<"$HDRS" | head -c 300))"; fi

# ---------------------------------------------------------------------------------------------
# Container properties
for c in "$CTR_GPUCOST" "$CTR_NGINX"; do
  if out="$(timeout 20 podman healthcheck run "$c" 2>&1)"; then
    ok "image HEALTHCHECK of $c reports healthy"
  else
    not_ok "image HEALTHCHECK of $c reports healthy ($(tr '\n' ' ' <<<"$out" | head -c 300))"
  fi
done

# podman top (descriptors, no ps(1) needed in the image): user in the container, user on the host.
procs="$(podman top "$CTR_GPUCOST" user huser args 2>/dev/null | tail -n +2)"
if [[ -n "$procs" ]] && grep -q /usr/local/bin/gpucost <<<"$procs" \
   && ! awk '$1 == "0" || $1 == "root" || $2 == "0" || $2 == "root" {bad = 1} END {exit !bad}' <<<"$procs"; then
  ok "gpucost container runs as non-root (user $(awk '{print $1; exit}' <<<"$procs"))"
else
  not_ok "gpucost container runs as non-root (podman top: $(tr -s ' \n' ' ;' <<<"$procs"))"
fi

t0=$(date +%s.%N)
timeout 30 podman stop -t 10 "$CTR_GPUCOST" >/dev/null 2>&1
t1=$(date +%s.%N)
elapsed="$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}')"
code="$(podman inspect -f '{{.State.ExitCode}}' "$CTR_GPUCOST" 2>/dev/null)"
if [[ "$code" == 0 ]] && awk -v e="$elapsed" 'BEGIN {exit !(e < 10)}'; then
  ok "podman stop (SIGTERM) stops gpucost in ${elapsed} s with exit code 0"
else
  not_ok "podman stop (SIGTERM) stops gpucost within 10 s with exit code 0 (took ${elapsed} s, exit code '${code}')"
  podman logs --tail 10 "$CTR_GPUCOST" 2>&1 | sed 's/^/#   /'
fi

t0=$(date +%s.%N)
timeout 30 podman stop -t 10 "$CTR_NGINX" >/dev/null 2>&1
t1=$(date +%s.%N)
elapsed="$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}')"
code="$(podman inspect -f '{{.State.ExitCode}}' "$CTR_NGINX" 2>/dev/null)"
if [[ "$code" == 0 ]]; then ok "podman stop stops nginx gracefully in ${elapsed} s with exit code 0"
else not_ok "podman stop stops nginx gracefully with exit code 0 (took ${elapsed} s, exit code '${code}')"; fi

# ---------------------------------------------------------------------------------------------
# Teardown (the EXIT trap repeats it on every other path)
cleanup
if [[ "${GPUCOST_TEST_KEEP:-0}" != 1 ]]; then
  left="$(podman ps -aq --filter "label=io.podman.compose.project=$PROJECT" 2>/dev/null)"
  if [[ -z "$left" ]] && ! podman network exists "$NETWORK" 2>/dev/null; then
    ok "containers and network of $PROJECT are removed"
  else not_ok "containers and network of $PROJECT are removed"; fi
fi
note "total: $((SECONDS - T_START)) s"
summary
((failed == 0))
