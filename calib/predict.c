/* predict.c - the analytic memory model (constants in etc/memory.yaml); the
 * correction learned from a family's launches is in estimate.c. */
#include "calib/store.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { PREC_FP32, PREC_MIXED, PREC_BF16, NPREC };
static const char *const prec_names[NPREC] = { "fp32", "mixed", "bf16" };

#define MAX_OPT 16
struct memconst {
	struct {
		char name[24];
		double b[NPREC][3];   /* params, gradients, optimizer state */
	} opt[MAX_OPT];
	size_t nopt;
	double linear, attention, replicated, split, checkpoint, scale[NPREC];
	double logits;
	struct {
		char kind[24];
		double bytes;
	} overhead[MAX_OPT];
	size_t noverhead;
	double overhead_default;
};

/* The same figures as etc/memory.yaml, used only when that file cannot be
 * read (a unit test holds the two equal). */
static void builtin_constants(struct memconst *c)
{
	static const struct { const char *name; double b[NPREC][3]; } opts[] = {
		{ "adamw", { { 4, 4, 8 }, { 2, 2, 12 }, { 2, 2, 4 } } },
		{ "adam", { { 4, 4, 8 }, { 2, 2, 12 }, { 2, 2, 4 } } },
		{ "lion", { { 4, 4, 4 }, { 2, 2, 8 }, { 2, 2, 2 } } },
		{ "sgd", { { 4, 4, 4 }, { 2, 2, 8 }, { 2, 2, 2 } } },
		{ "none", { { 4, 0, 0 }, { 2, 0, 0 }, { 2, 0, 0 } } },
	};

	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		snprintf(c->opt[i].name, sizeof(c->opt[i].name), "%s", opts[i].name);
		memcpy(c->opt[i].b, opts[i].b, sizeof(opts[i].b));
	}
	c->nopt = sizeof(opts) / sizeof(opts[0]);
	c->linear = 34;
	c->attention = 5;
	c->replicated = 10;
	c->split = 24;
	c->checkpoint = 2;
	c->scale[PREC_FP32] = 2;
	c->scale[PREC_MIXED] = 1;
	c->scale[PREC_BF16] = 1;
	c->logits = 4;
	snprintf(c->overhead[0].kind, sizeof(c->overhead[0].kind), "cpu");
	c->overhead[0].bytes = 256.0 * 1048576;
	c->noverhead = 1;
	c->overhead_default = 1073741824.0;
}

static bool ynum(const struct xl_ynode *n, double *out)
{
	uint64_t b;

	if (n && n->kind == XL_Y_SCALAR && xl_parse_bytes(n->str, &b)) {
		*out = (double)b;
		return true;
	}
	return xl_yscalar_double(n, out);
}

static bool load_constants(const char *file, struct memconst *c, char **err)
{
	struct xl_ynode *root, *ms, *act, *sc, *lg, *ov;
	size_t len;
	char *data = xl_read_file(file, &len, 0);
	bool ok = false;

	memset(c, 0, sizeof(*c));
	if (!data) {
		*err = xl_asprintf("%s: cannot read", file);
		return false;
	}
	root = xl_yaml_parse(data, len, err);
	free(data);
	if (!root)
		return false;
	ms = xl_ymap_get(root, "model_state");
	act = xl_ymap_get(root, "activation");
	lg = xl_ymap_get(root, "logits");
	ov = xl_ymap_get(root, "overhead");
	if (!ms || ms->kind != XL_Y_MAP || !act || !lg || !ov || ov->kind != XL_Y_MAP)
		goto bad;
	for (size_t i = 0; i < ms->n / 2 && c->nopt < MAX_OPT; i++) {
		struct xl_ynode *precs = ms->items[2 * i + 1];

		snprintf(c->opt[c->nopt].name, sizeof(c->opt[0].name), "%s", ms->items[2 * i]->str);
		for (int p = 0; p < NPREC; p++) {
			struct xl_ynode *v = xl_ymap_get(precs, prec_names[p]);

			if (!v || v->kind != XL_Y_SEQ || v->n != 3)
				goto bad;
			for (int k = 0; k < 3; k++)
				if (!ynum(v->items[k], &c->opt[c->nopt].b[p][k]))
					goto bad;
		}
		c->nopt++;
	}
	if (!ynum(xl_ymap_get(act, "linear"), &c->linear) ||
	    !ynum(xl_ymap_get(act, "attention"), &c->attention) ||
	    !ynum(xl_ymap_get(act, "replicated"), &c->replicated) ||
	    !ynum(xl_ymap_get(act, "split"), &c->split) ||
	    !ynum(xl_ymap_get(act, "checkpoint"), &c->checkpoint))
		goto bad;
	sc = xl_ymap_get(act, "scale");
	for (int p = 0; p < NPREC; p++)
		if (!ynum(xl_ymap_get(sc, prec_names[p]), &c->scale[p]))
			goto bad;
	if (!ynum(xl_ymap_get(lg, "bytes_per_element"), &c->logits))
		goto bad;
	c->overhead_default = 0;
	for (size_t i = 0; i < ov->n / 2 && c->noverhead < MAX_OPT; i++) {
		const char *k = ov->items[2 * i]->str;
		double v;

		if (!ynum(ov->items[2 * i + 1], &v))
			goto bad;
		if (strcmp(k, "default") == 0) {
			c->overhead_default = v;
		} else {
			snprintf(c->overhead[c->noverhead].kind, sizeof(c->overhead[0].kind), "%s", k);
			c->overhead[c->noverhead++].bytes = v;
		}
	}
	ok = true;
bad:
	if (!ok && !*err)
		*err = xl_asprintf("%s: not the expected layout", file);
	xl_ynode_free(root);
	return ok;
}

static const struct memconst *constants(void)
{
	static struct memconst c;
	static bool loaded;

	if (!loaded) {
		char *file = xl_data_path("etc/memory.yaml");
		char *err = NULL;

		if (!load_constants(file, &c, &err)) {
			xl_warn("memory model '%s': %s; using built-in constants", file, err);
			builtin_constants(&c);
		}
		free(err);
		free(file);
		loaded = true;
	}
	return &c;
}

/* ---- the analytic model ---------------------------------------------------------- */

static double num(const json_t *o, const char *key, double dflt)
{
	const json_t *x = json_object_get(o, key);

	if (json_is_number(x))
		return json_number_value(x);
	if (json_is_true(x))
		return 1;
	if (json_is_false(x))
		return 0;
	return dflt;
}

static bool flag(const json_t *o, const char *key)
{
	const json_t *x = json_object_get(o, key);
	const char *s = json_string_value(x);

	if (json_is_boolean(x))
		return json_is_true(x);
	if (json_is_number(x))
		return json_number_value(x) != 0;
	return s && (strcmp(s, "true") == 0 || strcmp(s, "on") == 0 || strcmp(s, "yes") == 0);
}

static uint64_t to_bytes(double v)
{
	if (!(v > 0))
		return 0;
	if (v >= 1.8e19)
		return UINT64_MAX;
	return (uint64_t)llround(v);
}

static void note_add(struct calib_prediction *out, const char *s)
{
	size_t n = strlen(out->note);

	snprintf(out->note + n, sizeof(out->note) - n, "%s%s", n ? "; " : "", s);
}

/* parts must be normalized (calib_signature). */
void calib_predict_analytic(const json_t *parts, struct calib_prediction *out)
{
	const struct memconst *c = constants();
	const json_t *model = json_object_get(parts, "model");
	const json_t *train = json_object_get(parts, "train");
	const json_t *par = json_object_get(parts, "parallel");
	const json_t *feat = json_object_get(parts, "features");
	const json_t *hw = json_object_get(parts, "hardware");
	const char *optname = json_string_value(json_object_get(train, "optimizer"));
	const char *precname = json_string_value(json_object_get(train, "precision"));
	const char *remat = json_string_value(json_object_get(train, "remat"));
	const char *kind = json_string_value(json_object_get(hw, "kind"));
	double params = num(model, "params", 0);
	double L = num(model, "layers", 0), h = num(model, "hidden", 0);
	double a = num(model, "heads", 0), s = num(model, "seq", 0), v = num(model, "vocab", 0);
	double b = num(train, "micro_batch", 1);
	double t = num(par, "tp", 1), pp = num(par, "pp", 1), fsdp = num(par, "fsdp", 1);
	double dp = num(par, "dp", 1), zero = num(par, "zero", 0);
	bool sp = flag(par, "sp") || flag(par, "sequence_parallel");
	bool flash = flag(train, "flash_attention") || flag(feat, "flash_attention");
	double pdeg, gdeg, odeg, nlocal, per_layer, attn, act = 0;
	const double *bpp = NULL;
	int prec = PREC_MIXED;

	memset(out, 0, sizeof(*out));
	out->correction = 1;
	out->device_memory_bytes = to_bytes(num(hw, "memory", num(hw, "memory_bytes", 0)));
	if (!(params > 0)) {
		note_add(out, "no model size (signature.model.params)");
		return;
	}
	if (precname) {
		int p;

		for (p = 0; p < NPREC && strcmp(precname, prec_names[p]) != 0; p++)
			;
		if (p == NPREC) {
			char *n = xl_asprintf("unknown precision '%s', taken as mixed", precname);

			note_add(out, n);
			free(n);
		} else {
			prec = p;
		}
	}
	if (!optname)
		optname = "adamw";
	for (size_t i = 0; i < c->nopt; i++)
		if (strcmp(c->opt[i].name, optname) == 0)
			bpp = c->opt[i].b[prec];
	if (!bpp) {
		char *n = xl_asprintf("unknown optimizer '%s', taken as adamw", optname);

		note_add(out, n);
		free(n);
		for (size_t i = 0; i < c->nopt; i++)
			if (strcmp(c->opt[i].name, "adamw") == 0)
				bpp = c->opt[i].b[prec];
		if (!bpp)
			bpp = c->opt[0].b[prec];
	}
	if (t < 1)
		t = 1;
	if (pp < 1)
		pp = 1;
	if (fsdp < 1)
		fsdp = 1;
	if (dp < 1)
		dp = 1;
	/* model states: tensor and pipeline parallelism split the parameters;
	 * fsdp shards all three states; ZeRO stage 1/2/3 over dp shards the
	 * optimizer state, then gradients, then parameters */
	nlocal = params / (t * pp);
	pdeg = fsdp * (zero >= 3 ? dp : 1);
	gdeg = fsdp * (zero >= 2 ? dp : 1);
	odeg = fsdp * (zero >= 1 ? dp : 1);
	out->model_state_bytes = to_bytes(nlocal * (bpp[0] / pdeg + bpp[1] / gdeg + bpp[2] / odeg));

	/* activations: Korthikanti et al. 2022, 16-bit, per layer */
	if (L > 0 && h > 0 && s > 0 && (a > 0 || flash)) {
		double sbh = s * b * h;

		attn = flash ? 0 : c->attention * a * s / h;
		if (!remat || strcmp(remat, "none") == 0 || strcmp(remat, "full") == 0) {
			if (sp || t == 1)
				per_layer = sbh * (c->linear + attn) / t;
			else
				per_layer = sbh * (c->replicated + c->split / t + attn / t);
			if (remat && strcmp(remat, "full") == 0)
				/* each layer keeps its input; one layer's working set
				 * is live while it is recomputed */
				act = L * c->checkpoint * sbh / (sp ? t : 1) + per_layer;
			else
				act = L * per_layer;
		} else if (strcmp(remat, "selective") == 0) {
			if (sp || t == 1)
				per_layer = c->linear * sbh / t;
			else
				per_layer = sbh * (c->replicated + c->split / t);
			act = L * per_layer;
		} else {
			char *n = xl_asprintf("unknown remat '%s', activations unknown", remat);

			note_add(out, n);
			free(n);
		}
		act *= c->scale[prec];
	} else {
		note_add(out, "activations unknown (signature.model needs layers, hidden, heads, seq)");
	}
	out->activation_bytes = to_bytes(act);
	if (v > 0 && s > 0)
		out->logits_bytes = to_bytes(c->logits * s * b * v / t);
	out->overhead_bytes = to_bytes(c->overhead_default);
	for (size_t i = 0; kind && i < c->noverhead; i++)
		if (strcasecmp(c->overhead[i].kind, kind) == 0)
			out->overhead_bytes = to_bytes(c->overhead[i].bytes);
	out->analytic_bytes = out->model_state_bytes + out->activation_bytes + out->logits_bytes +
			      out->overhead_bytes;
	out->predicted_bytes = out->analytic_bytes;
	out->known = true;
}

static json_t *bytes_or_null(uint64_t v, bool known)
{
	return known ? json_integer((json_int_t)v) : json_null();
}

json_t *calib_prediction_json(const struct calib_prediction *p)
{
	bool k = p->known;

	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:f, s:I, s:o, s:o, s:s, s:b, s:s}",
			 "model_state_bytes", bytes_or_null(p->model_state_bytes, k),
			 "activation_bytes", bytes_or_null(p->activation_bytes, k),
			 "logits_bytes", bytes_or_null(p->logits_bytes, k),
			 "overhead_bytes", bytes_or_null(p->overhead_bytes, k),
			 "analytic_bytes", bytes_or_null(p->analytic_bytes, k),
			 "correction", p->correction,
			 "samples", (json_int_t)p->samples,
			 "predicted_bytes", bytes_or_null(p->predicted_bytes, p->known),
			 "device_memory_bytes", bytes_or_null(p->device_memory_bytes,
							      p->device_memory_bytes > 0),
			 "kind", calib_kind_name(p->kind),
			 "calibrated", p->calibrated,
			 "note", p->note);
}
