#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL 15 and always stops it afterwards.
#
#   tests/pg/with_pg.sh COMMAND [ARGS...]   initdb in a temp dir, start on a free loopback
#                                           port, run COMMAND with DATABASE_URL set, stop
#                                           the server and delete the directory (also on
#                                           failure or Ctrl-C)
#   tests/pg/with_pg.sh --ctl stop|start    inside COMMAND: stop or start that server again
#                                           (the failover test uses it)
#
# COMMAND sees DATABASE_URL (database "postgres", superuser "gpucost", trust auth on
# 127.0.0.1 only) and GPUCOST_TEST_PG_DIR / GPUCOST_TEST_PG_PORT. initdb refuses to run as
# root, so as root the server runs as `nobody`; as a normal user it runs as that user.
set -euo pipefail

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
here=$(cd "$(dirname "$0")" && pwd)

as_owner() {
    if [[ $(id -u) -eq 0 ]]; then
        setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
    else
        "$@"
    fi
}

pg_start() {
    as_owner "$PGBIN/pg_ctl" -D "$GPUCOST_TEST_PG_DIR/data" -l "$GPUCOST_TEST_PG_DIR/server.log" \
        -o "-p $GPUCOST_TEST_PG_PORT -k $GPUCOST_TEST_PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=200" \
        -w -t 30 start >/dev/null
}

pg_stop() {
    as_owner "$PGBIN/pg_ctl" -D "$GPUCOST_TEST_PG_DIR/data" -m "${1:-fast}" -w -t 30 stop >/dev/null
}

if [[ "${1:-}" == "--ctl" ]]; then
    : "${GPUCOST_TEST_PG_DIR:?--ctl only works inside tests/pg/with_pg.sh}"
    case "${2:-}" in
        start) pg_start ;;
        stop) pg_stop fast ;;
        kill) pg_stop immediate ;;
        *) echo "usage: $0 --ctl start|stop|kill" >&2; exit 2 ;;
    esac
    exit 0
fi
if [[ $# -eq 0 ]]; then
    echo "usage: $0 COMMAND [ARGS...]" >&2
    exit 2
fi
if [[ ! -x "$PGBIN/initdb" ]]; then
    echo "with_pg: $PGBIN/initdb not found (install postgresql-15: .ci/install-deps test)" >&2
    exit 1
fi

GPUCOST_TEST_PG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/gpucost-pg.XXXXXX")
export GPUCOST_TEST_PG_DIR
cleanup() {
    if [[ -f "$GPUCOST_TEST_PG_DIR/data/postmaster.pid" ]]; then
        pg_stop immediate 2>/dev/null || true
    fi
    rm -rf "$GPUCOST_TEST_PG_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [[ $(id -u) -eq 0 ]]; then
    chown nobody:nogroup "$GPUCOST_TEST_PG_DIR"
fi
chmod 700 "$GPUCOST_TEST_PG_DIR"

GPUCOST_TEST_PG_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export GPUCOST_TEST_PG_PORT
as_owner "$PGBIN/initdb" -D "$GPUCOST_TEST_PG_DIR/data" -U gpucost --auth=trust -E UTF8 \
    --locale=C -N >/dev/null
pg_start
export DATABASE_URL="postgresql://gpucost@127.0.0.1:$GPUCOST_TEST_PG_PORT/postgres"
export GPUCOST_TEST_PG_CTL="$here/with_pg.sh"
# Sanitizer builds: suppress the libpq/libpqxx leak on broken connections (see lsan.supp).
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$here/lsan.supp"
set +e
"$@"
status=$?
set -e
exit $status
