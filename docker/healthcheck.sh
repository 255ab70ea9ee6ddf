#!/bin/bash
# Container HEALTHCHECK without curl: GET http://127.0.0.1:PORT/PATH over bash's /dev/tcp,
# healthy (exit 0) only on an HTTP 200 status line within TIMEOUT seconds.
# Usage: healthcheck [PORT] [PATH] [TIMEOUT]   (defaults: $GPUCOST_PORT or 8080, /healthz, 2)
port="${1:-${GPUCOST_PORT:-8080}}"
path="${2:-/healthz}"
timeout="${3:-2}"
exec 3<>"/dev/tcp/127.0.0.1/${port}" 2>/dev/null || { echo "unhealthy: cannot connect to 127.0.0.1:${port}"; exit 1; }
printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: healthcheck\r\nConnection: close\r\n\r\n' "$path" >&3
IFS= read -r -t "$timeout" status <&3 || { echo "unhealthy: no answer from ${path}"; exit 1; }
exec 3<&-
status="${status%$'\r'}"
case "$status" in
  "HTTP/1."?" 200"*) exit 0 ;;
  *) echo "unhealthy: ${path} answered '${status}'"; exit 1 ;;
esac
