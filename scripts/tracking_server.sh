#!/usr/bin/env bash
# A shared MLflow tracking server backed by PostgreSQL, both bound to 127.0.0.1 only.
#
#   scripts/tracking_server.sh start    # initdb (first time), start PostgreSQL, start `mlflow server`
#   scripts/tracking_server.sh status   # is it up? prints the tracking URI
#   scripts/tracking_server.sh stop
#
#   python -m hpoflow -m algo=random,gp_ei seed=0,1,2 tracking.uri=http://127.0.0.1:5000
#
# Settings (environment): HPOFLOW_SERVER_DIR (default ./outputs/tracking_server: pgdata, artifacts, logs),
# PORT (MLflow, 5000), PG_PORT (PostgreSQL, 5433), WORKERS (2), PYTHON (python with mlflow + psycopg2),
# PG_BIN (PostgreSQL's bin folder), AUTH=1 (MLflow basic-auth app; needs `pip install mlflow[auth]`).
# Debian/Ubuntu: `apt-get install -y postgresql` provides the binaries; nothing runs as a system service.
# The PostgreSQL password is generated once into $HPOFLOW_SERVER_DIR/pg_password (mode 600) and handed to
# MLflow through the environment, never on a command line.
set -euo pipefail

CMD=${1:-start}
DIR=$(mkdir -p "${HPOFLOW_SERVER_DIR:-$PWD/outputs/tracking_server}" && cd "${HPOFLOW_SERVER_DIR:-$PWD/outputs/tracking_server}" && pwd)
HOST=127.0.0.1
PORT=${PORT:-5000}
PG_PORT=${PG_PORT:-5433}
WORKERS=${WORKERS:-2}
PYTHON=${PYTHON:-python}
if [[ -z "${PG_BIN:-}" ]]; then
  if command -v initdb >/dev/null; then PG_BIN=$(dirname "$(readlink -f "$(command -v initdb)")")
  else PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true); fi
fi
[[ -x "${PG_BIN:-}/initdb" ]] || { echo "PostgreSQL not found: apt-get install -y postgresql (or set PG_BIN)" >&2; exit 3; }

PGDATA=$DIR/pgdata RUN=$DIR/run LOGS=$DIR/logs
mkdir -p "$RUN" "$LOGS" "$DIR/artifacts"

as_pg() {  # PostgreSQL refuses to run as root: use the postgres account then
  if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

stop_mlflow() {  # SIGTERM the server's process group, wait for a graceful exit, then SIGKILL what is left
  [[ -f $RUN/mlflow.pid ]] || return 0
  local pid; pid=$(cat "$RUN/mlflow.pid")
  kill -TERM -- "-$pid" 2>/dev/null || true
  for _ in $(seq 1 60); do kill -0 -- "-$pid" 2>/dev/null || break; sleep 0.5; done
  kill -KILL -- "-$pid" 2>/dev/null || true
  rm -f "$RUN/mlflow.pid"
}

pg_up() { as_pg "$PG_BIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; }
mlflow_up() { [[ -f $RUN/mlflow.pid ]] && kill -0 "$(cat "$RUN/mlflow.pid")" 2>/dev/null; }

start_postgres() {
  if [[ $(id -u) == 0 ]] && ! runuser -u postgres -- test -x "$DIR"; then
    echo "the postgres account cannot reach $DIR (a parent folder is private): set HPOFLOW_SERVER_DIR elsewhere" >&2
    exit 3
  fi
  if [[ ! -f $PGDATA/PG_VERSION ]]; then
    [[ -f $DIR/pg_password ]] || (umask 077 && "$PYTHON" -c "import secrets; print(secrets.token_urlsafe(24))" > "$DIR/pg_password")
    mkdir -p "$PGDATA"
    local pwfile=$RUN/pwfile
    (umask 077 && cp "$DIR/pg_password" "$pwfile")
    if [[ $(id -u) == 0 ]]; then chown -R postgres "$PGDATA" "$RUN" "$LOGS" && chown postgres "$pwfile"; fi
    as_pg "$PG_BIN/initdb" -D "$PGDATA" -U mlflow --pwfile="$pwfile" --auth=scram-sha-256 -E UTF8 >"$LOGS/initdb.log"
    rm -f "$pwfile"
  fi
  if ! pg_up; then
    as_pg "$PG_BIN/pg_ctl" -D "$PGDATA" -l "$LOGS/postgres.log" -w -t 120 \
      -o "-c listen_addresses=$HOST -p $PG_PORT -k $RUN" start >/dev/null
  fi
  export PGPASSWORD; PGPASSWORD=$(cat "$DIR/pg_password")
  if [[ -z $("$PG_BIN/psql" -h $HOST -p "$PG_PORT" -U mlflow -d postgres -tAc \
             "SELECT 1 FROM pg_database WHERE datname='mlflow'") ]]; then
    "$PG_BIN/createdb" -h $HOST -p "$PG_PORT" -U mlflow mlflow
  fi
}

start_mlflow() {
  mlflow_up && return 0
  local app=()
  [[ ${AUTH:-0} == 1 ]] && app=(--app-name basic-auth)
  # MLflow 3's background job runners (huey) are not needed for tracking: they would add seven processes
  MLFLOW_SERVER_ENABLE_JOB_EXECUTION=${MLFLOW_SERVER_ENABLE_JOB_EXECUTION:-false} \
  MLFLOW_BACKEND_STORE_URI="postgresql+psycopg2://mlflow:$(cat "$DIR/pg_password")@$HOST:$PG_PORT/mlflow" \
    setsid "$PYTHON" -m mlflow server --host $HOST --port "$PORT" --workers "$WORKERS" \
      --artifacts-destination "$DIR/artifacts" "${app[@]}" >"$LOGS/mlflow.log" 2>&1 < /dev/null &
  echo $! > "$RUN/mlflow.pid"
  for _ in $(seq 1 240); do  # migrations on a fresh database take a while
    if "$PYTHON" -c "import urllib.request,sys; urllib.request.urlopen('http://$HOST:$PORT/health', timeout=2)" 2>/dev/null; then
      return 0
    fi
    mlflow_up || { echo "mlflow server exited; see $LOGS/mlflow.log:" >&2; tail -20 "$LOGS/mlflow.log" >&2; exit 1; }
    sleep 0.5
  done
  echo "mlflow server did not answer on http://$HOST:$PORT/health within 120 s; see $LOGS/mlflow.log" >&2
  exit 1
}

case $CMD in
  start)
    start_postgres
    start_mlflow
    echo "MLflow tracking server: http://$HOST:$PORT  (PostgreSQL 127.0.0.1:$PG_PORT db mlflow; data in $DIR)"
    ;;
  stop)
    stop_mlflow
    if pg_up; then as_pg "$PG_BIN/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null; fi
    echo "stopped"
    ;;
  status)
    pg_up && echo "PostgreSQL: up on $HOST:$PG_PORT" || echo "PostgreSQL: down"
    mlflow_up && echo "MLflow: up, tracking URI http://$HOST:$PORT" || echo "MLflow: down"
    ;;
  *)
    echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
