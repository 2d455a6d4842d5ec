# venv_disk.sh - tools/venv.sh refuses to make a venv the disk has no room
# for (exit 77, the figures in its SKIP line) and creates nothing, so the
# tests that need it are skipped instead of the disk filling under the
# builds after it.  The disk is a fake `df` on PATH (fault injection: a full
# disk), which reports FREE_KB for the build directory and TMP_KB for TMPDIR.
. "$(dirname "$0")/lib.sh"
mkdir -p "$T/fake" "$T/w" "$T/tmp"
cat >"$T/fake/df" <<'DF'
#!/bin/sh
for a; do last=$a; done
case "$last" in *tmp*) kb=$TMP_KB ;; *) kb=$FREE_KB ;; esac
echo "Filesystem 1024-blocks Used Available Capacity Mounted on"
echo "/dev/fake 100000000 1 $kb 1% /"
DF
chmod +x "$T/fake/df"
# a release with no venv under $T/w: nothing may be made for it
venv() { (cd "$T/w" && PATH="$T/fake:$PATH" TMPDIR="$T/tmp" "$SRC/tools/venv.sh" "$@"); }

FREE_KB=1500000 TMP_KB=50000000 run venv jaxlib 0.4.29
expect_rc 77 "a jaxlib venv on a disk with 1,464 MiB free"
expect_err "SKIP: build/venv-jaxlib-0.4.29 needs about 900 MiB and 2048 MiB to spare; build has 1464 MiB free" "the figures"
[ ! -e "$T/w/build/venv-jaxlib-0.4.29" ] || fail "a refused venv was started"
ok "too little room on the build disk: refused, nothing made"

FREE_KB=9000000 TMP_KB=50000000 run venv torch
expect_rc 77 "torch's venv on a disk with 8,789 MiB free"
expect_err "needs about 11000 MiB" "torch's peak need"
[ ! -e "$T/w/build/venv-torch" ] || fail "a refused venv was started"
ok "torch's venv refused below its peak need"

FREE_KB=50000000 TMP_KB=100000 run venv jaxlib 0.4.29
expect_rc 77 "pip's downloads into a TMPDIR with 97 MiB free"
expect_err "SKIP: pip downloads into $T/tmp, which has 97 MiB free" "TMPDIR named with its figure"
[ ! -e "$T/w/build/venv-jaxlib-0.4.29" ] || fail "a refused venv was started"
ok "too little room for the downloads: refused"
done_ok
