# render_pure.sh - rendering creates nothing: env (every format), profile
# show/diff and run --dry-run leave a fresh HOME exactly as they found it,
# cache directories included; exec and run make them on the machine that
# launches.  dotenv and k8s render for another machine: this machine's
# HOME never appears, ${VAR:-default} takes its default or a --set value,
# a comment says which, and a ${VAR} with neither is an error.
. "$(dirname "$0")/lib.sh"
P="$T/profiles"; mkdir -p "$P"
export XLAUNCH_PROFILE_PATH="$P"
unset XLAUNCH_CACHE_ROOT
cat >"$P/caches.yaml" <<'Y'
description: local caches under HOME
env:
  JAX_COMPILATION_CACHE_DIR: ${HOME}/.cache/jax
  XLA_PERSISTENT_CACHE_PATH: ${XLAUNCH_CACHE_ROOT:-${HOME}/.cache/xla}/torch_xla
  TORCHINDUCTOR_CACHE_DIR: ${HOME}/.cache/inductor
flags:
  XLA_FLAGS: {xla_gpu_per_fusion_autotune_cache_dir: "${HOME}/.cache/autotune"}
policy: {cache: local}
candidates:
  - name: a
  - name: b
    env: {MICRO_BATCH: 4}
Y
printf 'extends: caches\nenv: {EXTRA: 1}\n' >"$P/caches2.yaml"
listing() { find "$T" ! -path "$T/out" ! -path "$T/err" ! -path "$T/before" ! -path "$T/after" | sort; }
listing >"$T/before"
# a HOME that is not there yet and that this user could make (policy
# cache: local asks that of sh and json, which render for this machine)
for f in sh json dotenv k8s; do
	run "$XL" env caches --format "$f" --set HOME="$T/trainer"
	expect_rc 0 "env --format $f"
done
run "$XL" env caches -c b
expect_rc 0 "env -c b"
expect_out "export JAX_COMPILATION_CACHE_DIR='$HOME/.cache/jax'" "sh renders this machine's HOME"
run "$XL" profile show caches
expect_rc 0 "profile show"
run "$XL" profile show caches --explain
expect_rc 0 "profile show --explain"
run "$XL" profile show caches --json
expect_rc 0 "profile show --json"
run "$XL" profile diff caches caches2
expect_rc 1 "profile diff (the profiles differ)"
run "$XL" run --dry-run caches -- true
expect_rc 0 "run --dry-run"
run "$XL" run --dry-run --json caches -- true
expect_rc 0 "run --dry-run --json"
listing >"$T/after"
cmp -s "$T/before" "$T/after" || { diff "$T/before" "$T/after" || true; fail "rendering created files"; }
ok "env, profile show/diff and --dry-run created nothing"
[ ! -e "$HOME/.cache" ] && [ ! -e "$XDG_STATE_HOME/xlaunch" ] || fail "a cache or state directory exists"
ok "no cache directory, no store"

# exec makes them, on the machine that launches
run "$XL" exec caches -- true
expect_rc 0 "exec"
for d in jax xla inductor autotune; do
	[ -d "$HOME/.cache/$d" ] || fail "exec did not create $HOME/.cache/$d"
done
ok "exec created every cache directory of the profile"
rm -rf "$HOME/.cache"
run "$XL" run --no-record caches -- true
expect_rc 0 "run"
[ -d "$HOME/.cache/jax" ] && [ -d "$HOME/.cache/autotune" ] || fail "run did not create the cache directories"
ok "run created the cache directories"

# a directory that cannot be created is refused without creating anything
printf 'env: {JAX_COMPILATION_CACHE_DIR: %s/file/sub}\npolicy: {cache: local}\n' "$T" >"$P/blocked.yaml"
: >"$T/file"
run "$XL" env blocked
expect_rc 77 "a cache path under a regular file is refused"
expect_err "cannot be created: '$T/file' is not a directory" "and says why"

# k8s: for another machine
run "$XL" env caches --format k8s
expect_rc 65 "k8s: \${HOME} has no value for the target"
expect_err "\${HOME} has no value for the target machine" "k8s: says so"
expect_err "--set HOME=VALUE" "k8s: says how to give one"
run "$XL" env caches --format k8s --set HOME=/home/trainer
expect_rc 0 "k8s with --set"
expect_no_out "$HOME" "k8s: this machine's HOME does not leak"
expect_out "value: \"/home/trainer/.cache/jax\"" "k8s: the --set value is used"
expect_out "value: \"/home/trainer/.cache/xla/torch_xla\"" "k8s: a default uses the --set value"
expect_out "# \${HOME} from --set: '/home/trainer'" "k8s: a comment says the value came from --set"
expect_out "# \${XLAUNCH_CACHE_ROOT} not given for the target: its default '/home/trainer/.cache/xla' used" "k8s: a comment says the default was used"
! grep -v '^#' "$T/out" | grep -qF '${' || fail "k8s: a literal \${...} in the spec"
ok "k8s: no literal \${...} outside comments"
XLAUNCH_CACHE_ROOT=/local/only run "$XL" env caches --format k8s --set HOME=/home/trainer
expect_no_out "/local/only" "k8s: this shell's variables are not read"
run "$XL" env caches --format k8s --set HOME=/h --set XLAUNCH_CACHE_ROOT=/mnt/cache
expect_out "value: \"/mnt/cache/torch_xla\"" "k8s: --set replaces a default"
expect_out "# \${XLAUNCH_CACHE_ROOT} from --set: '/mnt/cache'" "k8s: and says so"

# k8s: a literal $( stays literal (Kubernetes expands $(VAR))
printf 'env: {CMD: "a$(b)"}\n' >"$P/paren.yaml"
run "$XL" env paren --format k8s
expect_out 'value: "a$$(b)"' "k8s: \$( is escaped as \$\$("

# dotenv: the same rules
run "$XL" env caches --format dotenv --set HOME=/home/trainer
expect_rc 0 "dotenv with --set"
expect_no_out "$HOME" "dotenv: this machine's HOME does not leak"
expect_out 'JAX_COMPILATION_CACHE_DIR="/home/trainer/.cache/jax"' "dotenv: the --set value"
expect_out "# \${HOME} from --set" "dotenv: says so"

# --set in sh takes the place of this shell's value
run "$XL" env caches --set HOME="$T/elsewhere"
expect_out "export JAX_COMPILATION_CACHE_DIR='$T/elsewhere/.cache/jax'" "sh: --set replaces this shell's value"
run "$XL" env caches --set 1BAD=x
expect_rc 64 "--set needs a valid name"
done_ok
