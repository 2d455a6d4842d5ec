/* test_calib_model.c - SHA-256, canonical signatures and the memory model. */
#include "tests/unit/unit.h"

#include "calib/calib.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- SHA-256: FIPS 180-2 appendix B vectors ---------------------------------------- */

static void test_sha256_vectors(void **state)
{
	char hex[65];
	char *million = malloc(1000000);

	(void)state;
	calib_sha256_hex("abc", 3, hex);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	calib_sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
	assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	memset(million, 'a', 1000000);
	calib_sha256_hex(million, 1000000, hex);
	assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(million);
	calib_sha256_hex("", 0, hex);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	/* 55, 56 and 64 bytes: padding across a block edge */
	calib_sha256_hex("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 64, hex);
	assert_string_equal(hex, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

/* ---- signatures --------------------------------------------------------------------- */

static void sig_of(const char *json, struct calib_sig *sig)
{
	json_error_t e;
	json_t *p = json_loads(json, 0, &e);

	assert_non_null(p);
	assert_int_equal(calib_signature(p, sig), 0);
	json_decref(p);
}

static void test_signature_canonical(void **state)
{
	struct calib_sig a, b, c, d;

	(void)state;
	sig_of("{\"model\": {\"params\": 4.04e9, \"layers\": 52}, \"hardware\": {\"kind\": \"tpu\","
	       " \"memory\": \"32GiB\", \"count\": 8}, \"bundle\": {\"jax\": \"0.4.30\"}, \"code\": null}", &a);
	sig_of("{\"bundle\": {\"jax\": \"0.4.30\"}, \"hardware\": {\"count\": \"8\", \"memory\": 34359738368,"
	       " \"kind\": \"tpu\"}, \"model\": {\"layers\": 52.0, \"params\": 4040000000}}", &b);
	assert_string_equal(a.canonical, b.canonical);
	assert_string_equal(a.hash, b.hash);
	assert_string_equal(a.canonical,
			    "{\"bundle\":{\"jax\":\"0.4.30\"},\"hardware\":{\"count\":8,\"kind\":\"tpu\","
			    "\"memory\":34359738368},\"model\":{\"layers\":52,\"params\":4040000000}}");
	assert_string_equal(a.hardware_kind, "tpu");
	/* a bundle version is not a number, even when it looks like one */
	sig_of("{\"bundle\": {\"jax\": \"0.5\"}}", &c);
	assert_non_null(strstr(c.canonical, "\"0.5\""));
	calib_sig_release(&c);
	/* a different stack: same shape hash, other stack and whole hash */
	sig_of("{\"model\": {\"params\": 4.04e9, \"layers\": 52}, \"hardware\": {\"kind\": \"tpu\","
	       " \"memory\": \"32GiB\", \"count\": 8}, \"bundle\": {\"jax\": \"0.4.31\"}}", &c);
	assert_string_equal(a.shape_hash, c.shape_hash);
	assert_string_not_equal(a.stack_hash, c.stack_hash);
	assert_string_not_equal(a.hash, c.hash);
	/* device is read as hardware; float noise normalizes away */
	sig_of("{\"model\": {\"params\": 4.04e9, \"layers\": 52, \"dropout\": 0.30000000000000004},"
	       " \"device\": {\"kind\": \"tpu\", \"memory\": \"32GiB\", \"count\": 8}}", &d);
	assert_non_null(strstr(d.canonical, "\"dropout\":0.3"));
	assert_non_null(strstr(d.canonical, "\"hardware\""));
	calib_sig_release(&d);
	sig_of("{\"model\": {\"params\": 4.04e9, \"layers\": 52}, \"device\": {\"kind\": \"tpu\","
	       " \"memory\": \"32GiB\", \"count\": 8}}", &d);
	assert_string_equal(d.shape_hash, a.shape_hash);
	assert_int_equal(strlen(a.hash), 64);
	calib_sig_release(&a);
	calib_sig_release(&b);
	calib_sig_release(&c);
	calib_sig_release(&d);
	/* not an object */
	{
		json_t *arr = json_array();

		assert_int_equal(calib_signature(arr, &a), XL_EX_DATAERR);
		json_decref(arr);
	}
}

/* ---- prediction --------------------------------------------------------------------- */

static struct calib_prediction predict(const char *json)
{
	struct calib_prediction p;
	json_t *parts = json_loads(json, 0, NULL);

	assert_non_null(parts);
	assert_int_equal(calib_predict(NULL, parts, &p), 0);
	json_decref(parts);
	return p;
}

/* Rajbhandari et al. (ZeRO), figure 1: 7.5B parameters, Adam, mixed
 * precision (K = 12), N_d = 64. */
static void test_zero_figures(void **state)
{
	static const struct { int stage; double gb; double rounded; } f[] = {
		{ 0, 120.0, 120.0 }, { 1, 31.40625, 31.4 }, { 2, 16.640625, 16.6 }, { 3, 1.875, 1.9 },
	};

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		char *j = xl_asprintf("{\"model\": {\"params\": 7.5e9}, \"train\": {\"optimizer\": \"adam\","
				      " \"precision\": \"mixed\"}, \"parallel\": {\"dp\": 64, \"zero\": %d}}",
				      f[i].stage);
		struct calib_prediction p = predict(j);
		double gb = (double)p.model_state_bytes / 1e9;

		assert_true(p.known);
		assert_true(fabs(gb - f[i].gb) < 1e-6);
		assert_true(fabs(round(gb * 10) / 10 - f[i].rounded) < 1e-9);
		free(j);
	}
	/* fsdp over 64 devices is ZeRO-3 */
	{
		struct calib_prediction p = predict("{\"model\": {\"params\": 7.5e9}, \"train\": "
						    "{\"optimizer\": \"adamw\", \"precision\": \"mixed\"}, "
						    "\"parallel\": {\"fsdp\": 64}}");

		assert_int_equal(p.model_state_bytes, 1875000000ull);
	}
	/* precisions: fp32 16 B/param with Adam, bf16 8 B/param */
	assert_int_equal(predict("{\"model\": {\"params\": 1e9}, \"train\": {\"precision\": \"fp32\"}}")
				 .model_state_bytes, 16000000000ull);
	assert_int_equal(predict("{\"model\": {\"params\": 1e9}, \"train\": {\"precision\": \"bf16\"}}")
				 .model_state_bytes, 8000000000ull);
	/* tp divides parameters, gradients and optimizer state */
	assert_int_equal(predict("{\"model\": {\"params\": 1e9}, \"parallel\": {\"tp\": 4}}")
				 .model_state_bytes, 4000000000ull);
	/* sgd keeps one state */
	assert_int_equal(predict("{\"model\": {\"params\": 1e9}, \"train\": {\"optimizer\": \"sgd\","
				 " \"precision\": \"fp32\"}}").model_state_bytes, 12000000000ull);
}

/* Korthikanti et al. 2022, section 4, worked on a GPT-3-like layer:
 * s = 2048, b = 1, h = 12288, a = 96, L = 96, t = 8; 5as/h = 80 and
 * 5as/(ht) = 10. */
#define MODEL "\"model\": {\"params\": 1e6, \"layers\": 96, \"hidden\": 12288, \"heads\": 96, \"seq\": 2048}"
static void test_korthikanti(void **state)
{
	const uint64_t sbh = 2048ull * 12288;

	(void)state;
	/* no parallelism, no recompute: sbh(34 + 5as/h) per layer */
	assert_int_equal(predict("{" MODEL ", \"train\": {\"micro_batch\": 1}}").activation_bytes,
			 96 * sbh * (34 + 80));
	/* tensor parallel without sequence parallel: sbh(10 + 24/t + 5as/(ht)) */
	assert_int_equal(predict("{" MODEL ", \"parallel\": {\"tp\": 8}}").activation_bytes,
			 96 * sbh * 23);
	/* with sequence parallel: sbh/t (34 + 5as/h) */
	assert_int_equal(predict("{" MODEL ", \"parallel\": {\"tp\": 8, \"sp\": true}}").activation_bytes,
			 96 * sbh / 8 * 114);
	/* selective recompute: 34 sbh / t (with sp); sbh(10 + 24/t) without */
	assert_int_equal(predict("{" MODEL ", \"train\": {\"remat\": \"selective\"}, \"parallel\":"
				 " {\"tp\": 8, \"sp\": true}}").activation_bytes, 96 * 34 * sbh / 8);
	assert_int_equal(predict("{" MODEL ", \"train\": {\"remat\": \"selective\"}, \"parallel\":"
				 " {\"tp\": 8}}").activation_bytes, 96 * 13 * sbh);
	/* full recompute: 2sbh/t per layer plus one layer's working set */
	assert_int_equal(predict("{" MODEL ", \"train\": {\"remat\": \"full\"}, \"parallel\":"
				 " {\"tp\": 8, \"sp\": true}}").activation_bytes,
			 96 * 2 * sbh / 8 + sbh / 8 * 114);
	/* flash attention drops the 5as/h term */
	assert_int_equal(predict("{" MODEL ", \"train\": {\"flash_attention\": true}}").activation_bytes,
			 96 * 34 * sbh);
	assert_int_equal(predict("{" MODEL ", \"features\": {\"flash_attention\": true},"
				 " \"train\": {\"micro_batch\": 4}}").activation_bytes, 4 * 96 * 34 * sbh);
	/* fp32 activations take twice the bytes */
	assert_int_equal(predict("{" MODEL ", \"train\": {\"precision\": \"fp32\", \"flash_attention\":"
				 " true}}").activation_bytes, 2 * 96 * 34 * sbh);
}

static void test_prediction_parts(void **state)
{
	struct calib_prediction p;
	json_t *j, *parts;

	(void)state;
	/* logits 4 s b v / t; overhead per hardware kind */
	p = predict("{\"model\": {\"params\": 1e9, \"vocab\": 32000, \"seq\": 1024, \"layers\": 2,"
		    " \"hidden\": 1024, \"heads\": 8}, \"train\": {\"micro_batch\": 2}, \"parallel\":"
		    " {\"tp\": 2}, \"hardware\": {\"kind\": \"cpu\", \"memory\": \"64GiB\"}}");
	assert_int_equal(p.logits_bytes, 4ull * 1024 * 2 * 32000 / 2);
	assert_int_equal(p.overhead_bytes, 256ull << 20);
	assert_int_equal(p.device_memory_bytes, 64ull << 30);
	assert_int_equal(p.analytic_bytes, p.model_state_bytes + p.activation_bytes + p.logits_bytes +
			 p.overhead_bytes);
	assert_int_equal(p.predicted_bytes, p.analytic_bytes);
	assert_true(p.correction == 1.0);
	assert_false(p.calibrated);
	p = predict("{\"model\": {\"params\": 1e9}, \"hardware\": {\"kind\": \"tpu\"}}");
	assert_int_equal(p.overhead_bytes, 1ull << 30);
	assert_non_null(strstr(p.note, "activations unknown"));
	/* no model: not known, a note, no error */
	p = predict("{\"train\": {\"micro_batch\": 2}}");
	assert_false(p.known);
	assert_non_null(strstr(p.note, "params"));
	j = calib_prediction_json(&p);
	assert_true(json_is_null(json_object_get(j, "predicted_bytes")));
	json_decref(j);
	/* the model predicts a device's memory, or the host's on the host */
	p = predict("{\"model\": {\"params\": 1e9}, \"hardware\": {\"kind\": \"tpu\"}}");
	assert_int_equal(p.kind, CALIB_KIND_DEVICE_PEAK);
	p = predict("{\"model\": {\"params\": 1e9}, \"hardware\": {\"kind\": \"Xeon\", \"type\": \"host\"}}");
	assert_int_equal(p.kind, CALIB_KIND_HOST_PEAK_RSS);
	j = calib_prediction_json(&p);
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "host_peak_rss");
	json_decref(j);
	(void)parts;
}

/* ---- kinds, bases and families ------------------------------------------------------- */

static void test_kind_names(void **state)
{
	(void)state;
	for (int k = 0; k < CALIB_KIND_COUNT; k++) {
		enum calib_kind back;

		assert_true(calib_kind_parse(calib_kind_name((enum calib_kind)k), &back));
		assert_int_equal(back, k);
	}
	for (int b = 0; b < CALIB_BASIS_COUNT; b++) {
		enum calib_basis back;

		assert_true(calib_basis_parse(calib_basis_name((enum calib_basis)b), &back));
		assert_int_equal(back, b);
	}
	assert_string_equal(calib_kind_name(CALIB_KIND_HOST_PEAK_VM), "host_peak_vm");
	assert_string_equal(calib_basis_name(CALIB_BASIS_COMPILER), "compiler");
	{
		enum calib_kind k;
		enum calib_basis b;

		assert_false(calib_kind_parse("analytic", &k));   /* a basis, not a kind */
		assert_false(calib_kind_parse(NULL, &k));
		assert_false(calib_basis_parse("device_peak", &b));
	}
}

static void family_of(const char *json, char hash[65], json_t **coords)
{
	json_t *p = json_loads(json, 0, NULL);

	assert_non_null(p);
	assert_int_equal(calib_family(p, hash, coords), 0);
	json_decref(p);
}

#define JOB "\"argv\": [\"python\", \"train.py\", \"--steps\", \"20\", \"--lr=1e-3\"]," \
	    " \"code\": {\"file\": \"train.py\", \"commit\": \"abc\", \"dirty\": false}," \
	    " \"hardware\": {\"kind\": \"cpu\", \"type\": \"host\"}"

static void test_family(void **state)
{
	char h1[65], h2[65], h3[65], h4[65];
	json_t *c1, *c2, *c3, *c4;

	(void)state;
	/* sizes differ: one family, the sizes as coordinates */
	family_of("{" JOB ", \"train\": {\"micro_batch\": 8, \"optimizer\": \"adamw\"},"
		  " \"model\": {\"seq\": 2048, \"layers\": 4}, \"toggles\": {\"env\":"
		  " {\"MICRO_BATCH\": \"8\", \"MODE\": \"fast\"}, \"limits\": {\"address_space\": 100}},"
		  " \"bundle\": {\"jax\": \"0.10.2\"}}", h1, &c1);
	family_of("{" JOB ", \"train\": {\"micro_batch\": 16, \"optimizer\": \"adamw\"},"
		  " \"model\": {\"seq\": 4096, \"layers\": 4}, \"toggles\": {\"env\":"
		  " {\"MICRO_BATCH\": \"16\", \"MODE\": \"fast\"}, \"limits\": {\"address_space\": 200}},"
		  " \"bundle\": {\"jax\": \"0.10.3\"}}", h2, &c2);
	assert_string_equal(h1, h2);   /* the stack and the limits are not the family */
	assert_int_equal(json_integer_value(json_object_get(c1, "micro_batch")), 8);
	assert_int_equal(json_integer_value(json_object_get(c2, "seq")), 4096);
	assert_int_equal(json_integer_value(json_object_get(c2, "env MICRO_BATCH")), 16);
	/* numbers in argv: by option, --name=N, or position */
	assert_int_equal(json_integer_value(json_object_get(c1, "--steps")), 20);
	assert_true(json_real_value(json_object_get(c1, "--lr")) == 1e-3);
	assert_null(json_object_get(c1, "env MODE"));
	/* a non-numeric setting that differs is another family */
	family_of("{" JOB ", \"train\": {\"micro_batch\": 8, \"optimizer\": \"adamw\"},"
		  " \"model\": {\"seq\": 2048, \"layers\": 4}, \"toggles\": {\"env\":"
		  " {\"MICRO_BATCH\": \"8\", \"MODE\": \"slow\"}}}", h3, &c3);
	assert_string_not_equal(h1, h3);
	/* and so is a model dimension that is not a training one, and the hardware */
	family_of("{" JOB ", \"train\": {\"micro_batch\": 8, \"optimizer\": \"adamw\"},"
		  " \"model\": {\"seq\": 2048, \"layers\": 5}, \"toggles\": {\"env\":"
		  " {\"MICRO_BATCH\": \"8\", \"MODE\": \"fast\"}}}", h4, &c4);
	assert_string_not_equal(h1, h4);
	json_decref(c1);
	json_decref(c2);
	json_decref(c3);
	json_decref(c4);
	/* a bare number after a number is positional; two equal names stay apart */
	family_of("{\"argv\": [\"prog\", \"-n\", \"3\", \"4\", \"--x=1\", \"--x=2\"]}", h1, &c1);
	assert_int_equal(json_integer_value(json_object_get(c1, "-n")), 3);
	assert_int_equal(json_integer_value(json_object_get(c1, "arg 3")), 4);
	assert_int_equal(json_integer_value(json_object_get(c1, "--x")), 1);
	assert_int_equal(json_integer_value(json_object_get(c1, "--x (2)")), 2);
	json_decref(c1);
	/* a trainer's key=value arguments: one family over the values */
	family_of("{\"argv\": [\"python\", \"train.py\", \"per_device_batch_size=4\", \"run_name=a1\"]}", h1, &c1);
	family_of("{\"argv\": [\"python\", \"train.py\", \"per_device_batch_size=32\", \"run_name=a1\"]}", h2, &c2);
	assert_string_equal(h1, h2);
	assert_int_equal(json_integer_value(json_object_get(c1, "per_device_batch_size")), 4);
	assert_int_equal(json_integer_value(json_object_get(c2, "per_device_batch_size")), 32);
	/* a word that is no key, or a value that is no number, stays in the family */
	family_of("{\"argv\": [\"python\", \"train.py\", \"per_device_batch_size=4\", \"run_name=a2\"]}", h3, &c3);
	assert_string_not_equal(h1, h3);
	family_of("{\"argv\": [\"python\", \"train.py\", \"1x=4\"]}", h4, &c4);
	assert_null(json_object_get(c4, "1x"));
	json_decref(c1);
	json_decref(c2);
	json_decref(c3);
	json_decref(c4);
	/* not an object */
	{
		json_t *arr = json_array();

		assert_int_equal(calib_family(arr, h1, &c1), XL_EX_DATAERR);
		assert_null(c1);
		json_decref(arr);
	}
	/* host or not */
	{
		json_t *p = json_loads("{\"hardware\": {\"kind\": \"CPU\"}}", 0, NULL);

		assert_true(calib_parts_on_host(p));
		json_decref(p);
		p = json_loads("{\"hardware\": {\"kind\": \"NVIDIA H100\", \"type\": \"accelerator\"}}", 0, NULL);
		assert_false(calib_parts_on_host(p));
		json_decref(p);
		p = json_loads("{\"device\": {\"kind\": \"Xeon\", \"type\": \"host\"}}", 0, NULL);
		assert_true(calib_parts_on_host(p));
		json_decref(p);
	}
}

/* The built-in constants (used when etc/memory.yaml cannot be read) agree
 * with the file: predict in a child that has no data directory. */
static void test_builtin_matches_yaml(void **state)
{
	static const char *const cases[] = {
		"{" MODEL ", \"train\": {\"optimizer\": \"lion\", \"precision\": \"bf16\", \"remat\": \"full\"},"
		" \"parallel\": {\"tp\": 8, \"sp\": true}, \"hardware\": {\"kind\": \"cpu\"}}",
		"{" MODEL ", \"train\": {\"optimizer\": \"sgd\", \"precision\": \"fp32\"}, \"hardware\": {\"kind\": \"gpu\"}}",
		"{\"model\": {\"params\": 1e9, \"vocab\": 1000, \"seq\": 10}, \"train\": {\"optimizer\": \"none\"}}",
		"{\"model\": {\"params\": 1e9}, \"train\": {\"precision\": \"mixed\"}}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct calib_prediction mine = predict(cases[i]), theirs;
		int fds[2], status;
		pid_t pid;

		assert_int_equal(pipe(fds), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			close(fds[0]);
			setenv("XLAUNCH_DATADIR", "/nonexistent-xlaunch-data", 1);
			theirs = predict(cases[i]);
			if (write(fds[1], &theirs, sizeof(theirs)) != (ssize_t)sizeof(theirs))
				_exit(1);
			_exit(0);
		}
		close(fds[1]);
		assert_int_equal(read(fds[0], &theirs, sizeof(theirs)), (ssize_t)sizeof(theirs));
		close(fds[0]);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_int_equal(theirs.analytic_bytes, mine.analytic_bytes);
		assert_int_equal(theirs.model_state_bytes, mine.model_state_bytes);
		assert_int_equal(theirs.activation_bytes, mine.activation_bytes);
		assert_int_equal(theirs.overhead_bytes, mine.overhead_bytes);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_vectors),
		cmocka_unit_test(test_signature_canonical),
		cmocka_unit_test(test_zero_figures),
		cmocka_unit_test(test_korthikanti),
		cmocka_unit_test(test_prediction_parts),
		cmocka_unit_test(test_builtin_matches_yaml),
		cmocka_unit_test(test_kind_names),
		cmocka_unit_test(test_family),
	};

	return XL_TEST_RUN(tests, NULL, NULL);
}
