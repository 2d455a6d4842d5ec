# calib_show_pg.sh - calib_show.sh on a PostgreSQL store.
STORE_BACKEND=postgresql
. "${XLAUNCH_SRC:-.}/tests/integration/calib_show.sh"
