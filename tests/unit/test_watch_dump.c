/* test_watch_dump.c - XLA's dump read from outside: file names, ENTRY lines,
 * the total of a memory-usage report, and the reader on recorded dumps
 * (tests/data/xla-dump/: JAX and torch_xla jobs on the CPU, their files
 * laid out again here with their recorded times), pruned to what is kept; its modules through the compile watch,
 * paired with the runtime's own lines so that nothing counts twice. */
#include "tests/unit/unit.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/watch/watch.h"
#include "launcher/watch/dump.h"
#include "launcher/watch/events.h"
#include "tests/fuzz/targets.h"

static struct xl_cpats pats;

static int setup(void **state)
{
	xl_verbosity = -1;
	if (xl_cpats_read(NULL, &pats) != 0)
		return -1;
	return xl_test_dir_setup(state);
}

static int teardown(void **state)
{
	xl_cpats_release(&pats);
	return xl_test_dir_teardown(state);
}

static void test_names(void **state)
{
	struct xl_dump_name n;

	(void)state;
	assert_int_equal(xl_dump_name_parse("module_0004.jit_train_step", true, &n), XL_DF_MODULE);
	assert_int_equal(n.id, 4);
	assert_string_equal(n.module, "jit_train_step");
	assert_int_equal(xl_dump_name_parse("module_0004.jit_train_step.before_optimizations.txt", false, &n),
			 XL_DF_BEFORE);
	assert_string_equal(n.module, "jit_train_step");
	assert_int_equal(xl_dump_name_parse("module_0000.SyncTensorsGraph.92.before_optimizations.txt",
					    false, &n), XL_DF_BEFORE);
	assert_string_equal(n.module, "SyncTensorsGraph.92");
	assert_int_equal(xl_dump_name_parse("module_0016.jit_train_step.cpu_after_optimizations-memory-usage-report.txt",
					    false, &n), XL_DF_MEMORY_REPORT);
	assert_int_equal(n.id, 16);
	assert_string_equal(n.module, "jit_train_step");
	assert_true(n.optimized);
	/* the TPU compiler's files carry a compile id after the program's name */
	assert_int_equal(xl_dump_name_parse("module_0000.jit_f.cl_933746096.after_optimizations-memory-usage-report.txt",
					    false, &n), XL_DF_MEMORY_REPORT);
	assert_string_equal(n.module, "jit_f");
	assert_int_equal(xl_dump_name_parse("module_0000.jit_f.cl_933746096.before_optimizations.txt", false, &n),
			 XL_DF_BEFORE);
	assert_string_equal(n.module, "jit_f");
	xl_dump_name_parse("module_0003.jit_train_step.cl_12.after_optimizations.txt", false, &n);
	assert_string_equal(n.module, "jit_train_step");
	/* a name of the user's that only looks like one stays */
	assert_int_equal(xl_dump_name_parse("module_0001.jit_f.cl_x.before_optimizations.txt", false, &n),
			 XL_DF_BEFORE);
	assert_string_equal(n.module, "jit_f.cl_x");
	/* a GPU's stage has a dot of its own */
	assert_int_equal(xl_dump_name_parse("module_0007.jit_f.sm_8.0_gpu_after_optimizations-memory-usage-report.txt",
					    false, &n), XL_DF_MEMORY_REPORT);
	assert_string_equal(n.module, "jit_f");
	assert_int_equal(xl_dump_name_parse("module_0008.jit_train_step.after_optimizations.txt", false, &n),
			 XL_DF_LOADED);
	assert_string_equal(n.module, "jit_train_step");
	assert_int_equal(xl_dump_name_parse("module_0008.jit_train_step.cpu_after_optimizations.txt", false, &n),
			 XL_DF_MODULE);
	assert_string_equal(n.module, "");
	/* the files of a compilation's end */
	assert_true(n.optimized);
	xl_dump_name_parse("module_0008.jit_f.cpu_after_optimizations-buffer-assignment.txt", false, &n);
	assert_true(n.optimized);
	xl_dump_name_parse("module_0008.jit_f.before_optimizations.txt", false, &n);
	assert_false(n.optimized);
	xl_dump_name_parse("module_0008.jit_f", true, &n);
	assert_false(n.optimized);
	assert_int_equal(xl_dump_name_parse("module_0002.jit_broadcast_in_dim.debug_options", false, &n),
			 XL_DF_MODULE);
	assert_string_equal(n.module, "jit_broadcast_in_dim");
	/* a kernel's files say which module, not which program */
	assert_int_equal(xl_dump_name_parse("module_0000.SyncTensorsGraph.92.add_tanh_fusion_kernel_module-post-lowering.mlir",
					    false, &n), XL_DF_MODULE);
	assert_int_equal(n.id, 0);
	assert_string_equal(n.module, "");
	assert_int_equal(xl_dump_name_parse("module_x.jit_f.before_optimizations.txt", false, &n), XL_DF_OTHER);
	assert_int_equal(xl_dump_name_parse("module_0001.", false, &n), XL_DF_OTHER);
	assert_int_equal(xl_dump_name_parse("module_0001", false, &n), XL_DF_OTHER);
	assert_int_equal(xl_dump_name_parse("tpu_options.txt", false, &n), XL_DF_OTHER);
	assert_int_equal(n.id, -1);
	assert_int_equal(xl_dump_name_parse("module_99999999999999999999.f.before_optimizations.txt", false, &n),
			 XL_DF_OTHER);
	/* the names runtimes give */
	assert_string_equal(xl_dump_runtime("jit_train_step"), "jax");
	assert_string_equal(xl_dump_runtime("SyncTensorsGraph.93"), "torch_xla");
	assert_string_equal(xl_dump_runtime("cluster_0"), "xla");
	{
		char *f = xl_dump_function("jit_train_step");

		assert_string_equal(f, "jit(train_step)");
		free(f);
		f = xl_dump_function("pmap_step");
		assert_string_equal(f, "pmap(step)");
		free(f);
		f = xl_dump_function("SyncTensorsGraph.93");
		assert_string_equal(f, "SyncTensorsGraph");
		free(f);
	}
}

static void test_entry(void **state)
{
	struct xl_hlo_entry e, c = { NULL, 0, 0, NULL };
	const char *jax = "ENTRY %main.1 (w.1: f32[64,8], x.1: f32[100,64]) -> f32[64,8] {";
	const char *ptxla = "ENTRY %SyncTensorsGraph.93 (p0.1: f32[33,4], p1.2: f32[4], p2.3: f32[4,64], "
			    "p3.5: f32[64], p4.6: f32[64,16], /*index=5*/p5.8: f32[33,16], p6.79: f32[]) -> "
			    "(f32[], f32[64,4], /*index=5*/f32[16,64]) {";
	struct xl_buf big = XL_BUF_INIT;
	uint64_t h1, h2;

	(void)state;
	assert_int_equal(xl_hlo_entry_parse(jax, strlen(jax), &e), 0);
	assert_int_equal(e.n, 2);
	assert_int_equal(e.total, 2);
	assert_string_equal(e.v[0].name, "w.1");
	assert_string_equal(e.v[0].type, "f32[64,8]");
	assert_string_equal(e.v[1].name, "x.1");
	assert_string_equal(e.v[1].type, "f32[100,64]");
	xl_hlo_entry_copy(&c, &e);
	assert_true(xl_hlo_entry_same(&e, &c));
	xl_hlo_entry_release(&c);
	xl_hlo_entry_release(&e);
	assert_int_equal(xl_hlo_entry_parse(ptxla, strlen(ptxla), &e), 0);
	assert_int_equal(e.n, 7);
	assert_string_equal(e.v[5].name, "p5.8");
	assert_string_equal(e.v[5].type, "f32[33,16]");
	assert_string_equal(e.v[6].type, "f32[]");
	xl_hlo_entry_release(&e);
	/* layouts, tuples, names with a % */
	{
		const char *l = "ENTRY %e (%a: (f32[2]{0}, s32[]), b: bf16[8,128]{1,0:T(8,128)(2,1)}) -> f32[] {";

		assert_int_equal(xl_hlo_entry_parse(l, strlen(l), &e), 0);
		assert_int_equal(e.n, 2);
		assert_string_equal(e.v[0].name, "a");
		assert_string_equal(e.v[0].type, "(f32[2], s32[])");
		assert_string_equal(e.v[1].type, "bf16[8,128]");
		xl_hlo_entry_release(&e);
	}
	/* no parameters at all */
	assert_int_equal(xl_hlo_entry_parse("ENTRY %main () -> f32[] {", 24, &e), 0);
	assert_int_equal(e.total, 0);
	xl_hlo_entry_release(&e);
	/* not ENTRY lines */
	assert_int_equal(xl_hlo_entry_parse("ENTRY %main (a: f32[2]", 22, &e), -1);
	assert_int_equal(xl_hlo_entry_parse("%fused (a: f32[2]) -> f32[2] {", 30, &e), -1);
	assert_int_equal(xl_hlo_entry_parse("ENTRYX (a: f32[2]) {", 20, &e), -1);
	assert_int_equal(xl_hlo_entry_parse("ENTRY %m (a: f32[2]]) {", 23, &e), -1);
	assert_int_equal(xl_hlo_entry_parse("ENTRY %m (a: f32[2] /* open", 27, &e), -1);
	assert_int_equal(e.n, 0);
	/* many parameters: the first 128 and the last 128 kept with their
	 * places, every one hashed */
	for (int total = 300; total <= 1000; total += 700) {
		xl_buf_adds(&big, "ENTRY %m (");
		for (int i = 0; i < total; i++)
			xl_buf_addf(&big, "%sp%d: f32[%d]", i ? ", " : "", i, i);
		xl_buf_adds(&big, ") -> f32[] {");
		assert_int_equal(xl_hlo_entry_parse(big.buf, big.len, &e), 0);
		assert_int_equal(e.n, XL_HLO_MAX_PARAMS);
		assert_int_equal(e.total, total);
		assert_int_equal(e.v[127].index, 127);
		assert_string_equal(e.v[127].name, "p127");
		assert_int_equal(e.v[128].index, total - 128);
		assert_int_equal(e.v[255].index, total - 1);
		assert_string_equal(e.v[255].type, total == 300 ? "f32[299]" : "f32[999]");
		assert_ptr_equal(xl_hlo_entry_param(&e, total - 1), &e.v[255]);
		assert_ptr_equal(xl_hlo_entry_param(&e, 5), &e.v[5]);
		assert_null(xl_hlo_entry_param(&e, 150));
		assert_null(xl_hlo_entry_param(&e, total));
		assert_true(e.hash[150] != e.hash[151]);
		xl_hlo_entry_copy(&c, &e);
		assert_true(xl_hlo_entry_same(&e, &c));
		assert_int_equal(xl_hlo_entry_param(&c, total - 1)->index, total - 1);
		xl_hlo_entry_release(&c);
		xl_hlo_entry_release(&e);
		xl_buf_release(&big);
	}
	/* in a module's text: ENTRY comes last, after the fused computations */
	{
		const char *t = "HloModule m\n\n%fused (a: f32[2]) -> f32[2] {\n}\n\nENTRY %main.1 (x.1: s32[7]) -> s32[7] {\n  ROOT %x.1 = s32[7] parameter(0)\n}\n";

		assert_int_equal(xl_hlo_text_entry(t, strlen(t), &e, &h1), 0);
		assert_int_equal(e.n, 1);
		assert_string_equal(e.v[0].type, "s32[7]");
		xl_hlo_entry_release(&e);
		assert_int_equal(xl_hlo_text_entry(t, strlen(t), &e, &h2), 0);
		assert_true(h1 == h2);
		xl_hlo_entry_release(&e);
		assert_int_equal(xl_hlo_text_entry(t, 20, &e, &h2), -1);
		assert_true(h1 != h2);
		xl_hlo_entry_release(&e);
	}
}

/* The dump is timed by its files' mtimes, to the microsecond: where the
 * filesystem under TMPDIR keeps coarser times (whole seconds, as some
 * network and older filesystems do), the tests of the dump's timing cannot
 * show their case and skip, saying so. */
static void need_fine_mtimes(void)
{
	static int fine = -1;

	if (fine < 0) {
		char *p = xl_test_write("mtime-grain", "");
		struct timespec ts[2] = { { 1500000000, 123457000 }, { 1500000000, 123457000 } };
		struct stat st;

		assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
		assert_int_equal(stat(p, &st), 0);
		fine = st.st_mtim.tv_nsec == 123457000;
		unlink(p);
		free(p);
	}
	if (!fine) {
		fprintf(stderr, "SKIP: the filesystem under TMPDIR (%s) does not keep file times to the"
			" microsecond\n", xl_test_dir);
		skip();
	}
}

/* Lays the recorded dump NAME out in xl_test_dir/DIR, its first file at
 * epoch time base; returns the directory (caller frees). */
static char *lay_out(const char *name, const char *dir, double base)
{
	char *listing = xl_asprintf("tests/data/xla-dump/%s/files.txt", name);
	char *root = xl_test_path(dir);
	FILE *f = fopen(listing, "r");
	char line[1024];
	int pass;

	assert_non_null(f);
	assert_int_equal(xl_mkdirs(root, 0700), 0);
	/* files first, then the directories' times (a file made in one
	 * changes its time) */
	for (pass = 0; pass < 2; pass++, rewind(f))
	while (fgets(line, sizeof(line), f)) {
		long us;
		char rel[900], *src, *dst;
		struct timespec ts[2];
		size_t l;

		if (line[0] == '#' || sscanf(line, "%ld %899s", &us, rel) != 2)
			continue;
		l = strlen(rel);
		if ((rel[l - 1] == '/') != (pass == 1))
			continue;
		dst = xl_asprintf("%s/%s", root, rel);
		if (rel[l - 1] == '/') {
			assert_int_equal(xl_mkdirs(dst, 0700), 0);
		} else {
			char *text, *slash = strrchr(dst, '/');

			*slash = '\0';
			assert_int_equal(xl_mkdirs(dst, 0700), 0);
			*slash = '/';
			src = xl_asprintf("tests/data/xla-dump/%s/%s", name, rel);
			text = xl_read_file(src, &l, 0);
			{
				int fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0600);

				assert_true(fd >= 0);
				if (text)
					assert_int_equal(xl_write_all(fd, text, l), 0);
				close(fd);
			}
			free(text);
			free(src);
		}
		ts[0].tv_sec = ts[1].tv_sec = (time_t)(base + us / 1e6);
		ts[0].tv_nsec = ts[1].tv_nsec = (long)((base + us / 1e6 - (double)ts[0].tv_sec) * 1e9);
		assert_int_equal(utimensat(AT_FDCWD, dst, ts, AT_SYMLINK_NOFOLLOW), 0);
		free(dst);
	}
	fclose(f);
	free(listing);
	return root;
}

static long count_files(const char *dir)
{
	char *cmd = xl_asprintf("find '%s' -type f | wc -l", dir);
	FILE *p = popen(cmd, "r");
	long n = -1;

	assert_non_null(p);
	assert_int_equal(fscanf(p, "%ld", &n), 1);
	pclose(p);
	free(cmd);
	return n;
}

static const struct xl_cfn *fn(const struct xl_watch *w, const char *name)
{
	for (size_t i = 0; i < w->nfns; i++)
		if (strcmp(w->fns[i].name, name) == 0)
			return &w->fns[i];
	fail_msg("no function '%s'", name);
	return NULL;
}

/* A watch over the dump in dir (ours: pruned; since: the launch's start,
 * epoch), started start_ago seconds ago; its reader, which the watch made
 * and releases. */
static struct xl_dump *watch_dump(struct xl_watch *w, const char *dir, bool ours, double since,
				  double start_ago)
{
	struct xl_watch_cfg cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.pats = &pats;
	cfg.rule = pats.rule;
	cfg.start = xl_mono() - start_ago;
	cfg.dump_dir = dir;
	cfg.dump_ours = ours;
	cfg.dump_since = since;
	xl_watch_init(w, &cfg);
	assert_non_null(w->dump);
	return w->dump;
}

static void test_reader_jax(void **state)
{
	double base = xl_now() - 50;
	char *dir = lay_out("jax-drift", "jax", base);
	struct xl_dump *r;
	struct xl_watch w;
	struct xl_storm s;
	const struct xl_cfn *f;
	json_t *rep, *j;
	char *p;

	(void)state;
	need_fine_mtimes();
	assert_int_equal(count_files(dir), 62);
	r = watch_dump(&w, dir, true, base, 60);
	xl_watch_poll(&w, xl_mono() + 10);
	/* five modules, each one compilation with the times its files bracket */
	assert_int_equal(r->modules, 5);
	assert_int_equal(w.from_dump, 5);
	f = fn(&w, "jit(train_step)");
	assert_int_equal(f->compiles, 3);
	assert_string_equal(f->runtime, "jax");
	assert_int_equal(f->entries, 3);
	assert_int_equal(f->entry_changed, 2);
	assert_string_equal(f->e_first.v[1].type, "f32[100,64]");
	assert_string_equal(f->e_last.v[1].type, "f32[102,64]");
	assert_int_equal(f->pchg[1], 2);
	assert_int_equal(f->pchg[0], 0);
	/* the first module: from its directory (641 us: its MLIR and options)
	 * to its last file (18,644 us) */
	assert_true(fabs(w.ev[0].t - (base - r->origin + 641e-6)) < 1e-4);
	assert_true(fabs(w.ev[0].dur - 18003e-6) < 1e-5);
	/* pruned as read: the text and report of the first and the latest of
	 * each program stay, and the modules' directories until the modules
	 * are done (XLA may still write into one) */
	assert_int_equal(count_files(dir), 2 + 2 + 2 * 2 + 5 * 3);
	p = xl_asprintf("%s/module_0004.jit_train_step", dir);
	assert_int_equal(access(p, F_OK), 0);
	xl_watch_poll(&w, xl_mono() + 20);
	assert_int_equal(count_files(dir), 2 + 2 + 2 * 2);
	assert_int_equal(access(p, F_OK), -1);
	free(p);
	p = xl_asprintf("%s/module_0006.jit_train_step.before_optimizations.txt", dir);
	assert_int_equal(access(p, F_OK), -1);   /* neither first nor latest */
	free(p);
	p = xl_asprintf("%s/module_0008.jit_train_step.before_optimizations.txt", dir);
	assert_int_equal(access(p, F_OK), 0);
	free(p);
	xl_watch_finish(&w, xl_mono());
	xl_watch_verdict(&w, &s);
	assert_int_equal(count_files(dir), 2 + 2 + 2 * 2);
	assert_int_equal(s.compiles, 5);
	assert_int_equal(s.recompiles, 2);
	assert_false(s.storm);
	/* the memory reports, from the same reader */
	rep = xl_dump_memory_reports(r);
	assert_int_equal(json_integer_value(json_object_get(rep, "jit_train_step")), 33472);
	assert_int_equal(json_object_size(rep), 3);
	json_decref(rep);
	/* the largest of them, by its program's name (what early OOM holds
	 * against the limit) */
	{
		char fn[64];

		assert_int_equal(xl_watch_largest_report(&w, fn, sizeof(fn)), 33472);
		assert_string_equal(fn, "jit(train_step)");
	}
	j = xl_dump_json(r);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "kept"), "files")), 8);
	assert_true(json_integer_value(json_object_get(json_object_get(j, "dropped"), "files")) >= 47);
	json_decref(j);
	j = xl_watch_json(&w, &s);
	{
		json_t *fns = json_object_get(j, "functions"), *fj = NULL;
		size_t i;

		json_array_foreach(fns, i, fj)
			if (xl_streq(json_string_value(json_object_get(fj, "name")), "jit(train_step)"))
				break;
		assert_non_null(fj);
		assert_string_equal(json_string_value(json_object_get(fj, "cause")),
				    "input 1 (x.1) changed at every recompilation: f32[100,64] -> f32[101,64]"
				    " -> f32[102,64]");
		assert_int_equal(json_integer_value(json_object_get(fj, "from_dump")), 3);
	}
	json_decref(j);
	xl_watch_release(&w);
	free(dir);
}

static void test_reader_torch_xla(void **state)
{
	double base = xl_now() - 50;
	char *dir = lay_out("torch-xla-drift", "ptxla", base);
	struct xl_dump *r;
	struct xl_watch w;
	const struct xl_cfn *f;
	long before = count_files(dir);

	(void)state;
	need_fine_mtimes();
	/* a user's own dump: read, never changed */
	r = watch_dump(&w, dir, false, base, 60);
	xl_watch_finish(&w, xl_mono());
	assert_int_equal(count_files(dir), before);
	assert_int_equal(r->modules, 3);
	/* its graphs are numbered by an id that moves between graphs of one
	 * step (.92, then .93): one program */
	f = fn(&w, "SyncTensorsGraph");
	assert_string_equal(f->runtime, "torch_xla");
	assert_int_equal(f->compiles, 3);
	assert_string_equal(f->e_first.v[0].type, "f32[32,4]");
	assert_string_equal(f->e_last.v[0].type, "f32[34,4]");
	assert_int_equal(f->pchg[0], 2);
	/* torch_xla's compilations are long: the first took 623 ms */
	assert_true(w.ev[0].dur > 0.62 && w.ev[0].dur < 0.63);
	xl_watch_release(&w);
	/* files older than the run are another run's */
	r = watch_dump(&w, dir, false, base + 3600, 60);
	xl_watch_finish(&w, xl_mono());
	assert_int_equal(r->modules, 0);
	assert_int_equal(w.compiles, 0);
	xl_watch_release(&w);
	free(dir);
}

static void test_reader_loads(void **state)
{
	double base = xl_now() - 50;
	char *dir = lay_out("jax-cache-load", "load", base);
	struct xl_dump *r;
	struct xl_watch w;
	struct xl_storm s;

	(void)state;
	r = watch_dump(&w, dir, true, base, 60);
	xl_watch_finish(&w, xl_mono());
	xl_watch_verdict(&w, &s);
	/* programs loaded from a persistent cache: nothing compiled */
	assert_int_equal(r->modules, 0);
	assert_int_equal(r->loads, 5);
	assert_int_equal(s.compiles, 0);
	assert_int_equal(s.cache_hits, 5);
	assert_int_equal(fn(&w, "jit(train_step)")->dump_loads, 3);
	assert_int_equal(count_files(dir), 0);
	xl_watch_release(&w);
	free(dir);
}

/* One module's files as XLA writes them, mtime set to t (epoch). */
static void write_at(const char *dir, const char *name, const char *text, double t)
{
	char *p = xl_asprintf("%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	struct timespec ts[2];

	assert_true(fd >= 0);
	assert_int_equal(xl_write_all(fd, text, strlen(text)), 0);
	close(fd);
	ts[0].tv_sec = ts[1].tv_sec = (time_t)t;
	ts[0].tv_nsec = ts[1].tv_nsec = (long)((t - (double)(time_t)t) * 1e9);
	assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
	free(p);
}

static void test_reader_live(void **state)
{
	char *dir = xl_test_path("live");
	double now = xl_now();
	struct xl_dump *r;
	struct xl_watch w;
	struct xl_storm s;
	char name[128], text[256];
	const struct xl_cfn *f;

	(void)state;
	need_fine_mtimes();
	assert_int_equal(xl_mkdirs(dir, 0700), 0);
	r = watch_dump(&w, dir, true, now - 10, 10);
	/* a text still being written: its module counts, its entry waits */
	write_at(dir, "module_0001.jit_g.before_optimizations.txt", "HloModule jit_g\n\nENTRY %main (a.1: f32[", now - 0.1);
	xl_dump_poll(r, xl_mono() + 100, true);
	xl_watch_take_dump(&w);
	assert_int_equal(w.compiles, 1);
	f = fn(&w, "jit(g)");
	assert_int_equal(f->entries, 0);
	write_at(dir, "module_0001.jit_g.before_optimizations.txt",
		 "HloModule jit_g\n\nENTRY %main (a.1: f32[3]) -> f32[3] {\n  ROOT %a.1 = f32[3] parameter(0)\n}\n",
		 now - 0.05);
	/* a later file moves its end */
	write_at(dir, "module_0001.jit_g.cpu_after_optimizations-memory-usage-report.txt",
		 "Memory Space: default (color=0)\nTotal bytes: 12\n", now);
	xl_dump_poll(r, xl_mono() + 200, true);
	xl_watch_take_dump(&w);
	f = fn(&w, "jit(g)");
	assert_int_equal(f->compiles, 1);
	assert_int_equal(f->entries, 1);
	assert_string_equal(f->e_first.v[0].type, "f32[3]");
	assert_true(w.ev[0].dur > 0.09 && w.ev[0].dur < 0.11);
	/* the same program compiled again and again: only the first and the
	 * latest stay in the dump */
	for (int i = 2; i <= 6; i++) {
		snprintf(name, sizeof(name), "module_%04d.jit_g.before_optimizations.txt", i);
		snprintf(text, sizeof(text), "HloModule jit_g\n\nENTRY %%main (a.1: f32[%d]) -> f32[%d] {\n}\n", 3 + i, 3 + i);
		write_at(dir, name, text, now + i * 0.01);
		snprintf(name, sizeof(name), "module_%04d.jit_g.cpu_after_optimizations.txt", i);
		write_at(dir, name, "HloModule jit_g\n", now + i * 0.01 + 0.005);
		xl_dump_poll(r, xl_mono() + 300 + i, true);
		xl_watch_take_dump(&w);
	}
	assert_int_equal(count_files(dir), 3);
	assert_int_equal(r->files_kept, 3);
	assert_int_equal(r->kept_modules, 2);
	xl_watch_finish(&w, xl_mono());
	xl_watch_verdict(&w, &s);
	f = fn(&w, "jit(g)");
	assert_int_equal(f->compiles, 6);
	assert_int_equal(f->pchg[0], 5);
	assert_int_equal(count_files(dir), 3);
	assert_int_equal(r->bytes_kept, (int64_t)(strlen("HloModule jit_g\n\nENTRY %main (a.1: f32[3]) -> f32[3] {\n  ROOT %a.1 = f32[3] parameter(0)\n}\n")
					    + strlen("Memory Space: default (color=0)\nTotal bytes: 12\n")
					    + strlen("HloModule jit_g\n\nENTRY %main (a.1: f32[9]) -> f32[9] {\n}\n")));
	xl_watch_release(&w);
	free(dir);
}

/* A trainer's step compiled ahead of time for a TPU topology: its
 * memory-usage report lists every buffer of the program and runs to
 * megabytes, while the runtime's own small programs (jit(rng_bit_generator))
 * have reports of a few lines.  The step's total, in the report's head, is
 * read and is the largest; the small program is never the figure. */
static void test_reader_large_report(void **state)
{
	char *dir = xl_test_path("large");
	double now = xl_now();
	struct xl_dump *r;
	struct xl_watch w;
	struct xl_buf big = XL_BUF_INIT;
	json_t *rep;
	char fn[64];

	(void)state;
	need_fine_mtimes();
	assert_int_equal(xl_mkdirs(dir, 0700), 0);
	r = watch_dump(&w, dir, true, now - 10, 10);
	xl_buf_adds(&big, "Memory Space: default (color=0)\nTotal bytes: 265000000 (252.7MiB)\n"
		    "  cumulative_size;       size;       offset; used_by_n_values; shapes_list\n");
	while (big.len < (3u << 20))
		xl_buf_adds(&big, "   64.00KiB(  0%);   64.00KiB;            0;                1; bf16[128,256]\n");
	write_at(dir, "module_0001.jit_rng_bit_generator.cl_1.before_optimizations.txt",
		 "HloModule jit_rng_bit_generator\n\nENTRY %main (a.1: u32[2]) -> u32[2] {\n}\n", now - 5);
	write_at(dir, "module_0001.jit_rng_bit_generator.cl_1.after_optimizations-memory-usage-report.txt",
		 "Memory Space: default (color=0)\nTotal bytes: 524 (524B)\n", now - 4.9);
	write_at(dir, "module_0002.jit_train_step.cl_2.before_optimizations.txt",
		 "HloModule jit_train_step\n\nENTRY %main (a.1: f32[4]) -> f32[4] {\n}\n", now - 4);
	write_at(dir, "module_0002.jit_train_step.cl_2.after_optimizations-memory-usage-report.txt",
		 xl_buf_str(&big), now - 3);
	xl_dump_poll(r, xl_mono() + 100, true);
	xl_watch_take_dump(&w);
	assert_int_equal(xl_watch_largest_report(&w, fn, sizeof(fn)), 265000000);
	assert_string_equal(fn, "jit(train_step)");
	xl_watch_finish(&w, xl_mono());
	rep = xl_dump_memory_reports(r);
	assert_int_equal(json_object_size(rep), 2);
	{
		const char *k;
		json_t *v;
		int64_t best = -1;
		const char *at = NULL;

		json_object_foreach(rep, k, v)
			if (json_integer_value(v) > best) {
				best = json_integer_value(v);
				at = k;
			}
		assert_int_equal(best, 265000000);
		assert_string_equal(at, "jit_train_step");
	}
	json_decref(rep);
	xl_buf_release(&big);
	xl_watch_release(&w);
	free(dir);
}

/* A compilation longer than the reader's settle time: XLA writes the
 * before_optimizations text when it starts and nothing more until its
 * passes are over (minutes on an accelerator); its end and its memory
 * report are taken when they come. */
static void test_reader_long(void **state)
{
	char *dir = xl_test_path("long");
	double now = xl_now();
	struct xl_dump *r;
	struct xl_watch w;
	json_t *rep;

	(void)state;
	assert_int_equal(xl_mkdirs(dir, 0700), 0);
	r = watch_dump(&w, dir, true, now - 100, 100);
	write_at(dir, "module_0001.jit_big.before_optimizations.txt",
		 "HloModule jit_big\n\nENTRY %main (a.1: f32[3]) -> f32[3] {\n}\n", now - 40);
	xl_dump_poll(r, xl_mono() + 100, true);
	xl_watch_take_dump(&w);
	assert_int_equal(w.compiles, 1);
	/* 40 s without a file: still compiling, not done */
	xl_dump_poll(r, xl_mono() + 200, true);
	xl_watch_take_dump(&w);
	assert_int_equal(r->nopen, 1);
	/* the optimized text; a text dump's memory report follows it */
	write_at(dir, "module_0001.jit_big.tpu_after_optimizations.txt", "HloModule jit_big\n", now - 9);
	xl_dump_poll(r, xl_mono() + 300, true);
	xl_watch_take_dump(&w);
	xl_dump_poll(r, xl_mono() + 400, true);
	xl_watch_take_dump(&w);
	assert_int_equal(r->nopen, 1);
	write_at(dir, "module_0001.jit_big.tpu_after_optimizations-memory-usage-report.txt",
		 "Memory Space: default (color=0)\nTotal bytes: 4096\n", now - 6);
	xl_dump_poll(r, xl_mono() + 500, true);
	xl_watch_take_dump(&w);
	assert_int_equal(w.compiles, 1);
	assert_true(fabs(w.ev[0].dur - 34) < 1e-3);
	rep = xl_dump_memory_reports(r);
	assert_int_equal(json_integer_value(json_object_get(rep, "jit_big")), 4096);
	json_decref(rep);
	/* ended 6 s ago: done now */
	xl_dump_poll(r, xl_mono() + 600, true);
	assert_int_equal(r->nopen, 0);
	/* a compilation that never ends (it failed) is given up after an hour */
	write_at(dir, "module_0002.jit_big.before_optimizations.txt",
		 "HloModule jit_big\n\nENTRY %main (a.1: f32[4]) -> f32[4] {\n}\n", now - 3700);
	xl_dump_poll(r, xl_mono() + 700, true);
	xl_watch_take_dump(&w);
	assert_int_equal(r->nopen, 1);
	xl_dump_poll(r, xl_mono() + 800, true);
	assert_int_equal(r->nopen, 0);
	xl_watch_finish(&w, xl_mono());
	xl_watch_release(&w);
	free(dir);
}

/* A text of program jit_NAME with total inputs, all f32[4,4] but input
 * at, which is f32[rows,8]. */
static char *wide_text(const char *name, int total, int at, int rows)
{
	struct xl_buf b = XL_BUF_INIT;

	xl_buf_addf(&b, "HloModule jit_%s\n\nENTRY %%main.1 (", name);
	for (int i = 0; i < total; i++) {
		if (i == at)
			xl_buf_addf(&b, "%sx.%d: f32[%d,8]", i ? ", " : "", i, rows);
		else
			xl_buf_addf(&b, "%sw.%d: f32[4,4]", i ? ", " : "", i);
	}
	xl_buf_adds(&b, ") -> f32[] {\n}\n");
	return xl_buf_detach(&b);
}

/* The cause of function jit(NAME) in the watch's JSON. */
static char *cause_of(const struct xl_watch *w, const struct xl_storm *s, const char *name)
{
	json_t *j = xl_watch_json(w, s), *fj = NULL;
	char *fname = xl_asprintf("jit(%s)", name), *cause = NULL;
	size_t i;

	json_array_foreach(json_object_get(j, "functions"), i, fj)
		if (xl_streq(json_string_value(json_object_get(fj, "name")), fname))
			cause = xl_strdup(json_string_value(json_object_get(fj, "cause")));
	json_decref(j);
	free(fname);
	assert_non_null(cause);
	return cause;
}

/* A train state of 300 weights and the batch last, then in the middle of
 * 601 inputs: the input that changed is named by its place, and the
 * number of inputs did not change. */
static void test_reader_wide(void **state)
{
	char *dir = xl_test_path("wide");
	double now = xl_now();
	struct xl_dump *r;
	struct xl_watch w;
	struct xl_storm s;
	char name[128], *cause;

	(void)state;
	assert_int_equal(xl_mkdirs(dir, 0700), 0);
	r = watch_dump(&w, dir, true, now - 10, 10);
	for (int i = 0; i < 4; i++) {
		char *t = wide_text("last", 301, 300, 100 + i);

		snprintf(name, sizeof(name), "module_%04d.jit_last.before_optimizations.txt", 2 * i);
		write_at(dir, name, t, now + i * 0.01);
		free(t);
		t = wide_text("mid", 601, 300, 100 + i);
		snprintf(name, sizeof(name), "module_%04d.jit_mid.before_optimizations.txt", 2 * i + 1);
		write_at(dir, name, t, now + i * 0.01 + 0.005);
		free(t);
		xl_dump_poll(r, xl_mono() + 100 + i, true);
		xl_watch_take_dump(&w);
	}
	xl_watch_finish(&w, xl_mono());
	xl_watch_verdict(&w, &s);
	assert_int_equal(fn(&w, "jit(last)")->compiles, 4);
	assert_int_equal(fn(&w, "jit(last)")->pchg[300], 3);
	cause = cause_of(&w, &s, "last");
	assert_string_equal(cause, "input 300 (x.300) changed at every recompilation: f32[100,8] ->"
				   " f32[101,8] -> ... -> f32[103,8]");
	free(cause);
	cause = cause_of(&w, &s, "mid");
	assert_string_equal(cause, "input 300 of 601 changed at every recompilation (its type is not"
				   " kept: only the first 128 and the last 128 inputs' are)");
	free(cause);
	xl_watch_release(&w);
	free(dir);
}

/* JAX's own lines and the dump's modules of the same compilations: one
 * event each, with the dump's times. */
static void test_paired(void **state)
{
	double base = xl_now() - 50;
	char *dir = lay_out("jax-drift", "paired", base);
	struct xl_dump *r;
	struct xl_watch w;
	struct xl_cblock b;
	struct xl_storm s;
	static const char *const lines[] = {
		"Finished XLA compilation of jit(convert_element_type) in 0.050496817 sec",
		"Finished XLA compilation of jit(broadcast_in_dim) in 0.145509243 sec",
		"Finished XLA compilation of jit(train_step) in 0.050418139 sec",
		"Finished XLA compilation of jit(train_step) in 0.108896017 sec",
		"Finished XLA compilation of jit(train_step) in 0.112805128 sec",
	};

	(void)state;
	need_fine_mtimes();
	r = watch_dump(&w, dir, true, base, 60);
	xl_cblock_init(&b);
	for (size_t i = 0; i < 3; i++)
		xl_watch_line(&w, &b, lines[i], strlen(lines[i]), xl_mono() - 1);
	xl_watch_poll(&w, xl_mono() + 10);
	for (size_t i = 3; i < 5; i++)
		xl_watch_line(&w, &b, lines[i], strlen(lines[i]), xl_mono());
	xl_cblock_close(&w, &b);
	xl_watch_finish(&w, xl_mono());
	xl_watch_verdict(&w, &s);
	assert_int_equal(w.from_log, 5);
	assert_int_equal(w.from_dump, 5);
	assert_int_equal(s.compiles, 5);
	assert_int_equal(w.nev, 5);
	assert_int_equal(fn(&w, "jit(train_step)")->compiles, 3);
	/* the dump's times, not the lines' */
	assert_true(fabs(w.ev[0].t - (base - r->origin + 641e-6)) < 1e-4);
	xl_watch_release(&w);
	free(dir);
}

#define BYTES(s) { (const uint8_t *)(s), sizeof(s) - 1 }

static void test_fuzz_entries(void **state)
{
	static const struct { const uint8_t *p; size_t n; } names[] = {
		BYTES("\x01module_0004.jit_train_step"), BYTES("\x00module_0001.x.before_optimizations.txt"),
		BYTES("module_"), BYTES("module_1."), BYTES("\x00module_00.a.-memory-usage-report.txt"),
		BYTES(""), BYTES("\x00module_1.a.sm_.-memory-usage-report.txt"),
	}, entries[] = {
		BYTES("\x00" "ENTRY %m (a: f32[2], b: (s32[], f32[1]{0})) -> f32[] {"),
		BYTES("\x01HloModule m\nENTRY %m (a: f32[2]) -> f32[2] {\n}\n"),
		BYTES("\x00" "ENTRY %m (/*"), BYTES("\x00" "ENTRY ("), BYTES("\x01" "\nENTRY \n"), BYTES(""),
		BYTES("\x00" "ENTRY %m (a: f32[2]\x00, b: s32[]) {"),
	};

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		assert_true(xl_fuzz_dumpname(names[i].p, names[i].n) >= XL_DF_OTHER);
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
		(void)xl_fuzz_hloentry(entries[i].p, entries[i].n);
	assert_int_equal(xl_fuzz_hloentry(entries[0].p, entries[0].n), 2);
	assert_int_equal(xl_fuzz_dumpname(names[1].p, names[1].n), XL_DF_BEFORE);
}

/* ---- XLA's memory-usage reports -------------------------------------------------------------- */

static void test_memory_report_total(void **state)
{
	(void)state;
	assert_int_equal(xl_dump_memory_report_total("Memory Space: default (color=0)\nTotal bytes: 2542744"
						     " (2.42MiB)\n  cumulative_size;\n"), 2542744);
	/* the device's own space, not the host's */
	assert_int_equal(xl_dump_memory_report_total("Memory Space: host (color=5)\nTotal bytes: 10\n"
						     "Memory Space: default (color=0)\nTotal bytes: 51833570980"
						     " (48.27GiB)\n"), 51833570980LL);
	assert_int_equal(xl_dump_memory_report_total("Total bytes: 77\n"), 77);
	assert_int_equal(xl_dump_memory_report_total("nothing here"), -1);
	assert_int_equal(xl_dump_memory_report_total("Total bytes: -3"), -1);
	/* an older XLA's report (torch_xla 2.9's) */
	assert_int_equal(xl_dump_memory_report_total("Total bytes used: 35272 (34.4KiB)\n\nAllocations"
						     " sorted by size:\n"), 35272);
	assert_int_equal(xl_dump_memory_report_total("Total bytes used: x"), -1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_entry),
		cmocka_unit_test(test_memory_report_total),
		cmocka_unit_test(test_reader_jax),
		cmocka_unit_test(test_reader_torch_xla),
		cmocka_unit_test(test_reader_loads),
		cmocka_unit_test(test_reader_live),
		cmocka_unit_test(test_reader_long),
		cmocka_unit_test(test_reader_large_report),
		cmocka_unit_test(test_reader_wide),
		cmocka_unit_test(test_paired),
		cmocka_unit_test(test_fuzz_entries),
	};

	return XL_TEST_RUN(tests, setup, teardown);
}
