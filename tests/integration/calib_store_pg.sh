# calib_store_pg.sh - calib_store.sh on a PostgreSQL store: every calib
# command behaves as it does on SQLite.
STORE_BACKEND=postgresql
. "${XLAUNCH_SRC:-.}/tests/integration/calib_store.sh"
