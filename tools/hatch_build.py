# hatch_build.py - the wheel's contents, for hatchling (pyproject.toml).
#
# The wheel holds no Python: bin/xlaunch (the wheel's scripts), the man page
# and the data the binary reads from ../share/xlaunch (the wheel's data).
# The binary comes from one of two places:
#   - XLAUNCH_WHEEL_BIN and XLAUNCH_WHEEL_MAN, set by `make wheel`
#     (tools/wheel.sh): the release binary built for an old glibc, which
#     auditwheel then tags;
#   - otherwise `make` here, with this host's compiler and Debian's -dev
#     packages (`pip install .`, or pip building the sdist): a wheel for this
#     host, tagged linux_x86_64.
import os
import shutil
import subprocess
import sysconfig
import tempfile

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

# what `make` needs, by pkg-config name and by the Debian package that has it
NEEDS = [
	("yaml-0.1", "libyaml-dev"),
	("jansson", "libjansson-dev"),
	("sqlite3", "libsqlite3-dev"),
	("libpq", "libpq-dev"),
]
DATA_DIRS = ("profiles", "etc", "kernels")


def missing_packages():
	"""The Debian packages `make` would miss here, in apt-get's words."""
	missing = []
	for tool, pkg in (("make", "make"), ("cc", "gcc"), ("pkg-config", "pkg-config")):
		if shutil.which(tool) is None and pkg not in missing:
			missing.append(pkg)
	if shutil.which("pkg-config") is not None:
		for mod, pkg in NEEDS:
			r = subprocess.run(["pkg-config", "--exists", mod])
			if r.returncode != 0:
				missing.append(pkg)
	return missing


def build_here(root):
	"""Runs `make` in root; returns (binary, man page)."""
	missing = missing_packages()
	if missing:
		raise SystemExit(
			"xlaunch: build: missing Debian packages: %s "
			"(apt-get install %s), or install a prebuilt wheel "
			"(make wheel on a host that has them)" % (" ".join(missing), " ".join(missing)))
	jobs = str(os.cpu_count() or 1)
	r = subprocess.run(["make", "-C", root, "-j" + jobs, "all"])
	if r.returncode != 0:
		raise SystemExit("xlaunch: build: 'make all' failed with status %d" % r.returncode)
	return os.path.join(root, "xlaunch"), os.path.join(root, "build", "rel", "xlaunch.1")


class XlaunchBuildHook(BuildHookInterface):
	PLUGIN_NAME = "custom"

	def initialize(self, version, build_data):
		if self.target_name != "wheel":
			return
		binary = os.environ.get("XLAUNCH_WHEEL_BIN")
		if binary:
			man = os.environ["XLAUNCH_WHEEL_MAN"]
		else:
			binary, man = build_here(self.root)
		for f in (binary, man):
			if not os.path.isfile(f):
				raise SystemExit("xlaunch: build: '%s': no such file" % f)
		plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
		build_data["pure_python"] = False
		build_data["tag"] = "py3-none-" + plat
		build_data["shared_scripts"][binary] = "xlaunch"
		build_data["shared_data"][man] = "share/man/man1/xlaunch.1"
		# share/xlaunch/VERSION: which release the data belongs to; and
		# with a file of its own at the top, pip's uninstall removes the
		# whole directory, not only the files below it
		self._version_dir = tempfile.mkdtemp(prefix="xlaunch-wheel.")
		vfile = os.path.join(self._version_dir, "VERSION")
		with open(vfile, "w") as f:
			f.write(version + "\n")
		build_data["shared_data"][vfile] = "share/xlaunch/VERSION"
		for top in DATA_DIRS:
			for d, dirs, files in os.walk(os.path.join(self.root, top)):
				dirs[:] = sorted(x for x in dirs if x != "__pycache__")
				for f in sorted(files):
					if f.endswith(".pyc"):
						continue
					src = os.path.join(d, f)
					rel = os.path.relpath(src, self.root)
					build_data["shared_data"][src] = "share/xlaunch/" + rel

	def finalize(self, version, build_data, artifact_path):
		if self.target_name == "wheel" and getattr(self, "_version_dir", None):
			shutil.rmtree(self._version_dir, ignore_errors=True)
