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
	assert_int_equal(calib_predict(NULL, parts, 0, &p), 0);
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
	/* a child-reported prediction wins */
	parts = json_loads("{\"model\": {\"params\": 1e9}}", 0, NULL);
	assert_int_equal(calib_predict(NULL, parts, 12345, &p), 0);
	assert_true(p.reported);
	assert_int_equal(p.predicted_bytes, 12345);
	j = calib_prediction_json(&p);
	assert_int_equal(json_integer_value(json_object_get(j, "predicted_bytes")), 12345);
	assert_true(json_is_integer(json_object_get(j, "model_state_bytes")));
	assert_true(json_is_true(json_object_get(j, "reported")));
	json_decref(j);
	json_decref(parts);
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
	};

	return XL_TEST_RUN(tests, NULL, NULL);
}
