# shellcheck shell=bash
# Sourced by .ci/run (set -euo pipefail, as root): installs Postgres 15 + pgvector 0.8.0 and starts a
# throwaway cluster on 127.0.0.1:55432 with jit=off, database `rankgate`, extension `vector`, then exports
# RANKGATE_TEST_DATABASE_URL for the test suite. Safe to re-run: an already-running server on the port is
# reused, an already-installed pgvector is not rebuilt.
#
# Debian bookworm ships postgresql-15 but no pgvector package; pgvector 0.8.0 is built from Debian's own
# trixie *source* package through a private sources list (the machine's apt configuration is untouched).
# See ../shared/notes/stack.md ("Postgres").

rankgate_pg_setup() {
  local pg_port=55432
  local pg_bin=/usr/lib/postgresql/15/bin
  local pg_config="$pg_bin/pg_config"
  local url="postgres://postgres@127.0.0.1:${pg_port}/rankgate"
  export DEBIAN_FRONTEND=noninteractive

  # 1. Packages (server, headers for building the extension, a compiler).
  if [ ! -x "$pg_bin/postgres" ] || [ ! -x "$pg_config" ] ||
    [ ! -f "$("$pg_config" --includedir-server 2>/dev/null || echo /nonexistent)/postgres.h" ] || ! command -v gcc >/dev/null || ! command -v make >/dev/null; then
    echo "setup-postgres: apt-get install postgresql-15 postgresql-server-dev-15 make gcc"
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends postgresql-15 postgresql-server-dev-15 make gcc >/dev/null
  fi

  # 2. pgvector 0.8.0 from Debian trixie's source package.
  local extdir
  extdir="$("$pg_config" --sharedir)/extension"
  if [ ! -f "$extdir/vector.control" ] || [ ! -f "$("$pg_config" --pkglibdir)/vector.so" ]; then
    local work uri
    work="$(mktemp -d /tmp/rankgate-pgvector.XXXXXX)"
    uri="$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)"
    [ -n "$uri" ] || uri="http://deb.debian.org/debian"
    chmod 755 "$work"
    mkdir -p "$work/lists/partial" "$work/src"
    chown -R _apt "$work/lists" "$work/src" 2>/dev/null || true
    echo "deb-src $uri trixie main" >"$work/sources.list"
    local aptopts=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
      -o "Dir::State::Lists=$work/lists" -o "APT::Get::Only-Source=true")
    echo "setup-postgres: building pgvector from Debian trixie source in $work"
    apt-get "${aptopts[@]}" update -qq
    (cd "$work/src" && apt-get "${aptopts[@]}" source --download-only pgvector >/dev/null)
    local orig
    orig="$(ls "$work"/src/pgvector_*.orig.tar.* | head -n1)"
    tar -xf "$orig" -C "$work/src"
    local srcdir
    srcdir="$(find "$work/src" -mindepth 1 -maxdepth 1 -type d -name 'pgvector*' | head -n1)"
    (cd "$srcdir" && make -s PG_CONFIG="$pg_config" OPTFLAGS="" with_llvm=no >/dev/null &&
      make -s PG_CONFIG="$pg_config" with_llvm=no install >/dev/null)
    echo "setup-postgres: installed pgvector $(sed -n "s/^default_version = '\(.*\)'/\1/p" "$extdir/vector.control")"
    rm -rf "$work"
  fi

  # 3. A throwaway cluster (reused if one already answers on the port).
  if ! "$pg_bin/pg_isready" -q -h 127.0.0.1 -p "$pg_port"; then
    local data
    data="$(mktemp -d /tmp/rankgate-pg.XXXXXX)"
    chown postgres:postgres "$data"
    echo "setup-postgres: initdb $data"
    su postgres -s /bin/sh -c "'$pg_bin/initdb' -D '$data/data' --auth=trust -U postgres -E UTF8 --locale=C.UTF-8 >'$data/initdb.log' 2>&1"
    su postgres -s /bin/sh -c "'$pg_bin/pg_ctl' -D '$data/data' -l '$data/server.log' -w -t 60 start -o \"-c listen_addresses=127.0.0.1 -c port=$pg_port -c jit=off -c unix_socket_directories='$data' -c max_connections=50 -c shared_buffers=256MB -c fsync=off -c synchronous_commit=off -c full_page_writes=off\" >/dev/null"
    echo "setup-postgres: server started (data $data/data, log $data/server.log; stop with: su postgres -c '$pg_bin/pg_ctl -D $data/data stop')"
  fi

  # 4. Database + extension.
  local psql=(psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$pg_port" -U postgres)
  if [ "$("${psql[@]}" -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'rankgate'")" != "1" ]; then
    "${psql[@]}" -d postgres -c "CREATE DATABASE rankgate"
  fi
  "${psql[@]}" -d rankgate -c "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS vector"
  echo "setup-postgres: $("${psql[@]}" -d rankgate -tAc "SELECT 'PostgreSQL ' || current_setting('server_version') || ', pgvector ' || extversion || ', jit=' || current_setting('jit') FROM pg_extension WHERE extname = 'vector'")"
  export RANKGATE_TEST_DATABASE_URL="$url"
}

rankgate_pg_setup
