# run_ranks_pg.sh - run_ranks.sh on a PostgreSQL store: the two-rank JAX job
# records its ranks, publishes one choice per launch and merges its outcome
# on the server as on SQLite.
STORE_BACKEND=postgresql
. "${XLAUNCH_SRC:-.}/tests/integration/run_ranks.sh"
