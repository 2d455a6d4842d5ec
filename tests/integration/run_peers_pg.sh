# run_peers_pg.sh - run_peers.sh on a PostgreSQL store, as ranks on many
# hosts would share it: the same ends, leases and records through the
# server.
STORE_BACKEND=postgresql
. "${XLAUNCH_SRC:-.}/tests/integration/run_peers.sh"
