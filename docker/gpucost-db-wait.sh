#!/bin/bash
# Start order without an orchestrator's help.
#
#   gpucost-db-wait schema -- CMD...   waits until the schema is up to date, then execs CMD
#                                      (a replica: `gpucost serve` refuses a schema that is
#                                      behind; exec keeps PID 1's signals for CMD)
#   gpucost-db-wait migrate            the one-shot job: waits until the database answers, then
#                                      `gpucost migrate` and `gpucost seed`, each retried while it
#                                      cannot connect (exit 3: the network's DNS can miss a
#                                      lookup while containers join it); exits with the last status
#
# Compose v2 could express this with `depends_on: condition:`, but podman-compose 1.0.3 ignores
# conditions, and Kubernetes has no start order between a Job and a Deployment. Without
# DATABASE_URL (embedded catalog) `schema` execs at once. The probe is `gpucost apikey list`:
# exit 3 = cannot connect, 1 = connected but the schema is not up to date (its stdout, the key
# prefixes, is discarded).
# Env: GPUCOST_DB_WAIT_S (60): give up with exit 1 after this many seconds.
set -u

usage() { echo "usage: gpucost-db-wait schema -- CMD... | gpucost-db-wait migrate" >&2; exit 2; }
mode="${1:-}"
case "$mode" in
  schema) [[ "${2:-}" == -- ]] && (($# > 2)) || usage; shift 2 ;;
  migrate) (($# == 1)) || usage ;;
  *) usage ;;
esac
max_wait="${GPUCOST_DB_WAIT_S:-60}"
gpucost=/usr/local/bin/gpucost
started=$SECONDS

log() {
  printf '{"ts":"%s","component":"gpucost-db-wait","level":"%s","msg":"%s"}\n' \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$1" "$2" >&2
}
# (stderr kept in variables: the root filesystem is read-only)
oneline() { printf '%s' "$1" | tr '\n"' ' ' | head -c 300; }

# until_connected WHAT CMD...: runs CMD until it exits other than 3 or time is up; its status.
until_connected() {
  local what="$1" rc err; shift
  while :; do
    err="$("$@" 2>&1 >&3 </dev/null)"
    rc=$?
    ((rc != 3)) && { [[ -n "$err" ]] && printf '%s\n' "$err" >&2; return "$rc"; }
    if ((SECONDS - started >= max_wait)); then
      log error "$what: cannot connect within ${max_wait}s: $(oneline "$err")"
      return 3
    fi
    log info "$what: cannot connect yet; retrying"
    sleep 1
  done
} 3>&1

if [[ "$mode" == migrate ]]; then
  [[ -n "${DATABASE_URL:-}" ]] || { log error "migrate: DATABASE_URL is not set"; exit 2; }
  until_connected migrate "$gpucost" migrate || exit
  until_connected seed "$gpucost" seed
  exit
fi

if [[ -n "${DATABASE_URL:-}" ]]; then
  while :; do
    err="$("$gpucost" apikey list 2>&1 >/dev/null </dev/null)" && break
    if ((SECONDS - started >= max_wait)); then
      log error "the schema is not up to date within ${max_wait}s: $(oneline "$err")"
      exit 1
    fi
    (((SECONDS - started) % 10 == 0)) && log info "waiting for the migrated schema"
    sleep 1
  done
  log info "schema up to date after $((SECONDS - started))s"
fi
exec "$@"
