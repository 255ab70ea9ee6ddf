#!/bin/bash
# Start order without an orchestrator's help: waits until PostgreSQL can be used, then execs
# the command (so the command keeps the PID and gets the engine's signals).
#
#   gpucost-db-wait server -- CMD...   the database answers (the one-shot migrate + seed job)
#   gpucost-db-wait schema -- CMD...   the schema is up to date (a replica: `gpucost serve`
#                                      refuses to start on a schema that is behind)
#
# Compose v2 could express this with `depends_on: condition:`, but podman-compose 1.0.3 ignores
# conditions, and Kubernetes has no start order between a Job and a Deployment. Without
# DATABASE_URL (embedded catalog) it execs at once. The probe is `gpucost apikey list`: exit 3
# = cannot connect, 1 = connected but the schema is not up to date (its stdout, the key
# prefixes, is discarded).
# Env: GPUCOST_DB_WAIT_S (60): give up with exit 1 after this many seconds.
set -u

mode="${1:-}"
[[ "$mode" == server || "$mode" == schema ]] && [[ "${2:-}" == -- ]] && (($# > 2)) || {
  echo "usage: gpucost-db-wait server|schema -- CMD..." >&2; exit 2; }
shift 2
max_wait="${GPUCOST_DB_WAIT_S:-60}"

log() {
  printf '{"ts":"%s","component":"gpucost-db-wait","level":"%s","msg":"%s"}\n' \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$1" "$2" >&2
}

if [[ -n "${DATABASE_URL:-}" ]]; then
  waited=0
  while :; do
    # (stderr kept in a variable: the root filesystem is read-only)
    err="$(/usr/local/bin/gpucost apikey list 2>&1 >/dev/null </dev/null)"
    rc=$?
    ((rc == 0)) && break
    ((rc != 3)) && [[ "$mode" == server ]] && break
    if ((waited >= max_wait)); then
      log error "database not ready ($mode) within ${max_wait}s: $(printf '%s' "$err" | tr '\n"' ' ' | head -c 300)"
      exit 1
    fi
    ((waited % 10 == 0)) && log info "waiting for the database ($mode)"
    sleep 1
    waited=$((waited + 1))
  done
  log info "database ready ($mode) after ${waited}s"
fi
exec "$@"
