#!/bin/bash
# PID 1 of the nginx container.
#
# nginx 1.22 resolves `server gpucost:8080` in the upstream block once, at (re)load, and never
# again; podman/netavark hands a container a NEW address every time it is restarted or
# recreated, so a plain nginx would keep proxying to a dead address (504) after any gpucost
# restart. This wrapper
#   1. waits (bounded) until the upstream name resolves, since nginx refuses to start otherwise;
#   2. runs nginx in the foreground and re-resolves the name every few seconds, sending nginx
#      SIGHUP (graceful reload: new workers, old ones finish their requests) when it changes;
#   3. turns SIGTERM/SIGINT into a graceful nginx stop (SIGQUIT) and exits with nginx's status.
# Keeping the upstream block (instead of `resolver` + a variable in proxy_pass) keeps the
# upstream keep-alive pool, which spares cpp-httplib's 5-deep listen backlog.
#
# Env: GPUCOST_UPSTREAM_HOST (gpucost), GPUCOST_UPSTREAM_RECHECK_S (1),
#      GPUCOST_UPSTREAM_WAIT_S (60: give up and exit 1 if the name never resolves).
set -u

host="${GPUCOST_UPSTREAM_HOST:-gpucost}"
recheck="${GPUCOST_UPSTREAM_RECHECK_S:-1}"
max_wait="${GPUCOST_UPSTREAM_WAIT_S:-60}"

log() {
  local level="$1"; shift
  printf '{"ts":"%s","component":"nginx-entrypoint","level":"%s","msg":"%s"}\n' \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$level" "$*" >&2
}
resolve() { getent ahostsv4 "$host" 2>/dev/null | awk '{print $1}' | sort -u | tr '\n' ' '; }

addrs="$(resolve)"
waited=0
while [[ -z "$addrs" ]]; do
  if ((waited >= max_wait)); then
    log error "upstream host '$host' did not resolve within ${max_wait}s"
    exit 1
  fi
  ((waited % 10 == 0)) && log info "waiting for upstream host '$host' to resolve"
  sleep 1; waited=$((waited + 1))
  addrs="$(resolve)"
done
log info "upstream '$host' is ${addrs% }"

nginx -e stderr -g 'daemon off;' "$@" &
nginx_pid=$!

stopping=0
trap 'stopping=1; kill -QUIT "$nginx_pid" 2>/dev/null' TERM INT QUIT
trap 'kill -HUP "$nginx_pid" 2>/dev/null' HUP

while ((!stopping)) && kill -0 "$nginx_pid" 2>/dev/null; do
  sleep "$recheck" & wait $! 2>/dev/null
  ((stopping)) && break
  now="$(resolve)"
  if [[ -n "$now" && "$now" != "$addrs" ]]; then
    log info "upstream '$host' moved from ${addrs% } to ${now% }; reloading nginx"
    kill -HUP "$nginx_pid" 2>/dev/null
    addrs="$now"
  fi
done
# `wait` returns early (>128) when a trapped signal arrives; loop until nginx is really gone.
# The signal can also end `wait` just as nginx exits: then ask once more for nginx's own status
# (bash keeps it), so a graceful stop is not reported as 143.
while :; do
  wait "$nginx_pid"
  rc=$?
  kill -0 "$nginx_pid" 2>/dev/null && continue
  if ((rc > 128)); then
    wait "$nginx_pid" 2>/dev/null
    again=$?
    ((again != 127)) && rc=$again
  fi
  break
done
log info "nginx exited with status $rc"
exit "$rc"
