# readme_samples.sh - the sample outputs of README.md are what the binary
# prints: each ```console block after a `<!-- sample -->` line is run from
# the source tree with a private state directory and cache, as a newcomer
# would type it (xlaunch on PATH), and its lines checked against the output
# (tests/integration/readme_samples.py says how); a sample that needs the
# demo's .venv runs when tools/venv.sh can make it, one that needs a
# python3 without jax when this host's has none.
. "$(dirname "$0")/lib.sh"
cd "$SRC"
mkdir -p "$T/bin"
ln -s "$XL" "$T/bin/xlaunch"
export PATH="$T/bin:$PATH" PYTHONDONTWRITEBYTECODE=1
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-$T/cache}"
unset VIRTUAL_ENV XLAUNCH_CACHE_ROOT
met=""
if venv=$(tools/venv.sh demo 2>"$T/venv.err") && [ "$venv" = .venv ]; then
	met="$met venv"
else
	echo "samples that run .venv/bin/python skipped: $(grep SKIP "$T/venv.err" | tail -1)"
fi
python3 -c 'import jax' 2>/dev/null || met="$met python3-without-jax"
run python3 "$SRC/tests/integration/readme_samples.py" README.md $met
cat "$T/out"
expect_rc 0 "README.md's samples are what xlaunch prints"
done_ok
