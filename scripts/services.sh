#!/usr/bin/env bash
# Make sure the local PostgreSQL and Redis that the tests use are up. On this project's machines they are
# started before a session; this only restarts one that has stopped, and says so when it cannot.
set -uo pipefail

pg_up() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }
redis_up() { (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; }

if ! pg_up && command -v pg_ctlcluster >/dev/null 2>&1; then
  echo "[services] starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
  for _ in $(seq 1 30); do pg_up && break; sleep 1; done
fi
if ! redis_up && command -v redis-server >/dev/null 2>&1; then
  echo "[services] starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /tmp --logfile /tmp/anchorgpu-redis.log || true
  for _ in $(seq 1 30); do redis_up && break; sleep 1; done
fi
pg_up || echo "[services] PostgreSQL is not reachable on 127.0.0.1:5432: postgres tests will fail" >&2
redis_up || echo "[services] Redis is not reachable on 127.0.0.1:6379: redis tests will fail" >&2
exit 0
