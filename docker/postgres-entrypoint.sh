#!/bin/bash
# PID 1 (under the engine's init) of the PostgreSQL container.
#
# First start (no $PGDATA/PG_VERSION): initdb with the `postgres` superuser reachable only over
# the container's own Unix socket, then a login role and a database for gpucost (owner of its
# database, not a superuser), password authentication (SCRAM) for that role from the container's
# own networks only (`samenet`: the compose network or the pod network). Then, every start:
# exec postgres listening on every address of the container.
#
# Env: POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE (required at first start),
#      POSTGRES_USER (gpucost), POSTGRES_DB (gpucost), PGDATA (/var/lib/postgresql/data/pgdata).
set -euo pipefail

PGDATA="${PGDATA:-/var/lib/postgresql/data/pgdata}"
db_user="${POSTGRES_USER:-gpucost}"
db_name="${POSTGRES_DB:-gpucost}"
export PGDATA

log() {
  printf '{"ts":"%s","component":"postgres-entrypoint","level":"%s","msg":"%s"}\n' \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$1" "$2" >&2
}

# SQL identifiers and literals are built from the environment: accept plain names only, and
# double the quotes of the password literal.
[[ "$db_user" =~ ^[a-z_][a-z0-9_]{0,62}$ ]] || { log error "POSTGRES_USER must be a plain lower-case name"; exit 1; }
[[ "$db_name" =~ ^[a-z_][a-z0-9_]{0,62}$ ]] || { log error "POSTGRES_DB must be a plain lower-case name"; exit 1; }

if [[ ! -s "$PGDATA/PG_VERSION" ]]; then
  password="${POSTGRES_PASSWORD:-}"
  if [[ -n "${POSTGRES_PASSWORD_FILE:-}" ]]; then password="$(<"$POSTGRES_PASSWORD_FILE")"; fi
  if [[ -z "$password" ]]; then
    log error "no cluster in $PGDATA and neither POSTGRES_PASSWORD nor POSTGRES_PASSWORD_FILE is set"
    exit 1
  fi
  log info "initialising a PostgreSQL 15 cluster in $PGDATA"
  initdb --pgdata="$PGDATA" --username=postgres --encoding=UTF8 --locale=C.UTF-8 \
         --auth-local=peer --auth-host=reject >/dev/null
  sql_password="${password//\'/\'\'}"
  # Single-user mode: no server, no socket, nothing listening while the roles are made.
  postgres --single -D "$PGDATA" postgres >/dev/null <<SQL
CREATE ROLE "$db_user" LOGIN PASSWORD '$sql_password';
CREATE DATABASE "$db_name" OWNER "$db_user";
SQL
  unset password sql_password
  {
    echo "# gpucost: the application role, with a password, from the container's networks only"
    echo "host  $db_name  $db_user  samenet  scram-sha-256"
  } >>"$PGDATA/pg_hba.conf"
  log info "created role $db_user and database $db_name"
fi

# Socket in /tmp: the root filesystem is read-only (compose: tmpfs on /tmp).
exec postgres -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/tmp \
  -c log_destination=stderr -c logging_collector=off "$@"
