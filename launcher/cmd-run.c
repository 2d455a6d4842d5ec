/* cmd-run.c - `xlaunch run PROFILE [...] -- COMMAND [ARG...]`: the command
 * line; the launch itself is the run room's (launcher/run/launch.c). */
#include "launcher/run/run.h"

#include <stdlib.h>

/* --retry: peer-failed only happens to a rank of a job, and a rank never
 * retries alone */
static bool parse_retry(const char *value, void *field)
{
	unsigned set;

	if (!xl_outcome_set_parse(value ? value : "oom", &set) || (set & (1u << XL_OUT_PEER_FAILED)))
		return false;
	*(unsigned *)field = set;
	return true;
}

/* --fail-on: outcomes a child that exited 0 can still have; ok is never a failure */
static bool parse_fail_on(const char *value, void *field)
{
	unsigned set;

	if (!xl_outcome_set_parse(value, &set) || (set & (1u << XL_OUT_OK)))
		return false;
	*(unsigned *)field = set;
	return true;
}

/* --on-storm: warn or stop, over the profile's compile.on_storm */
static bool parse_on_storm(const char *value, void *field)
{
	return xl_on_storm_parse(value, (int *)field);
}

/* --early-oom: on or off, over the profile's compile.early_oom */
static bool parse_early_oom(const char *value, void *field)
{
	return xl_early_oom_parse(value, (int *)field);
}

static const struct xl_opt run_options[] = {
	{ .name = "candidate", .short_name = 'c', .kind = XL_OPT_STRING, .arg = "CAND",
	  .offset = XL_FIELD(struct xl_run_opts, cand, const char *), .flags = XL_OPTF_SHORT,
	  .help = "only this candidate (no retry)" },
	{ .name = "retry", .kind = XL_OPT_CALLBACK, .arg = "CLASSES",
	  .offset = XL_FIELD(struct xl_run_opts, retry, unsigned), .flags = XL_OPTF_OPTIONAL,
	  .parse = parse_retry,
	  .what = "a list of outcomes (oom, crash, timeout, error, compile-storm) or none"
		  " (peer-failed is never retried: a rank never retries alone)",
	  .help = "outcomes that move on to the next candidate\n"
		  "(comma-separated; default oom; none disables)" },
	{ .name = "fail-on", .kind = XL_OPT_CALLBACK, .arg = "CLASSES",
	  .offset = XL_FIELD(struct xl_run_opts, fail_on, unsigned), .parse = parse_fail_on,
	  .what = "a list of outcomes other than ok (compile-storm, ...) or none",
	  .help = "exit 79 when the child exited 0 but the last outcome is\n"
		  "one of these (compile-storm: a storm fails CI)" },
	{ .name = "on-storm", .kind = XL_OPT_CALLBACK, .arg = "WHAT",
	  .offset = XL_FIELD(struct xl_run_opts, on_storm, int), .parse = parse_on_storm,
	  .what = "warn or stop",
	  .help = "what a compile storm does: warn (default) names it at the\n"
		  "end; stop ends the child as soon as the storm rule is met\n"
		  "(SIGTERM, SIGKILL after --grace; outcome compile-storm)" },
	{ .name = "early-oom", .kind = XL_OPT_CALLBACK, .arg = "ON|OFF",
	  .offset = XL_FIELD(struct xl_run_opts, early_oom, int), .parse = parse_early_oom,
	  .what = "on or off",
	  .help = "on (default): a program whose XLA memory report exceeds\n"
		  "the launch's limit ends the child at its compile (SIGTERM,\n"
		  "SIGKILL after --grace; outcome oom); off: the runtime's own\n"
		  "allocation failure decides" },
	XL_OPTION_COUNT(0, "max-attempts", "N", struct xl_run_opts, max_attempts, 1, 1000,
			"at most N attempts (default: every candidate)"),
	XL_OPTION_DURATION(0, "timeout", "DUR", struct xl_run_opts, timeout_s,
			   "stop the child after DUR (SIGTERM, then SIGKILL)"),
	XL_OPTION_DURATION(0, "grace", "DUR", struct xl_run_opts, grace_s,
			   "time between SIGTERM and SIGKILL (default 10s)"),
	XL_OPTION_FLAG(0, "no-record", struct xl_run_opts, no_record, "record nothing in the store"),
	XL_OPTION_FLAG(0, "dry-run", struct xl_run_opts, dry_run, "print the attempts in order, run nothing"),
	XL_OPTION_FLAG(0, "record-all-ranks", struct xl_run_opts, all_ranks,
		       "every rank records (default: rank 0 only)"),
	XL_OPTION_FLAG(0, "try-infeasible", struct xl_run_opts, try_infeasible,
		       "launch candidates predicted not to fit too (default: skipped)"),
	XL_OPTION_FLAG(0, "no-xla-dump", struct xl_run_opts, no_xla_dump,
		       "do not add XLA's dump (its compilations and memory reports read from outside)"),
	XL_OPTION_FLAG(0, "no-runtime-check", struct xl_run_opts, no_runtime_check,
		       "launch even when the command's Python lacks the profile's runtime"),
	XL_OPTION_CALLBACK(0, "set", "VAR=VALUE", struct xl_run_opts, set, struct xl_override_list,
			   xl_opt_override_set, "VAR=VALUE with a valid variable name (at most 64)",
			   "set VAR for this launch, after the profile and its candidate\n"
			   "(repeatable; checked, explained and signed as a profile's)"),
	XL_OPTION_CALLBACK(0, "flag", "VAR:NAME=VALUE", struct xl_run_opts, flag, struct xl_override_list,
			   xl_opt_override_flag, "VAR:NAME=VALUE, VAR one of XLA_FLAGS, LIBTPU_INIT_ARGS, TF_XLA_FLAGS (at most 64)",
			   "set flag NAME of VAR (XLA_FLAGS, LIBTPU_INIT_ARGS, ...) for this\n"
			   "launch, as a profile's flags: section would (repeatable)"),
	XL_OPTION_END,
};

static const struct xl_run_opts run_defaults = {
	.retry = 1u << XL_OUT_OOM,
	.grace_s = 10.0,
};

static enum xl_exit cmd_run(struct xl_ctx *ctx, const struct xl_call *call)
{
	const struct xl_run_opts *o = call->opts;

	if (!call->restc && !o->dry_run)
		return xl_usage_error(call, "no command to run (put it after '--')");
	xl_profile_set_overrides(o->set.v, o->set.n, o->flag.v, o->flag.n);
	return xl_run(ctx, call->argv[0], call->restc ? call->restv : NULL, call->restc, o);
}

const struct xl_cmd xl_cmd_run = {
	.name = "run",
	.summary = "launch and supervise a command, record the outcome, retry",
	.operands = "PROFILE",
	.rest = "COMMAND [ARG...]",
	.json = "with --dry-run, the plan: {profile, order, max_attempts}",
	.help =
		"Supervises COMMAND under PROFILE: its own process group, signals forwarded,\n"
		"output to the terminal and to $XDG_STATE_HOME/xlaunch/runs/ID/, the outcome\n"
		"named (ok, oom, compile-storm, crash, error, timeout, interrupted,\n"
		"peer-failed) and recorded, and the next candidate tried when the outcome\n"
		"is in --retry, with that candidate's args after COMMAND's own arguments.\n"
		"Candidates predicted not to fit are skipped unless\n"
		"--try-infeasible.  In a job of several ranks (WORLD_SIZE and a job id)\n"
		"the ranks watch each other through the store: when another rank of the\n"
		"launch ends badly or its lease lapses, this rank's child gets SIGTERM,\n"
		"SIGKILL after the profile's ranks.grace, and the attempt is peer-failed.\n",
	.epilog =
		"The exit status is the last attempt's child's: its code, or 128+N for\n"
		"signal N (143 for a rank ended for another rank whose child then exited\n"
		"0); 79 when it exited 0 with an outcome listed in --fail-on; 77\n"
		"when every candidate is predicted infeasible and nothing is launched; 69\n"
		"when the Python COMMAND names (itself or by its #!) lacks the runtime the\n"
		"profile is for (jax for JAX_PLATFORMS, torch_xla for PJRT_DEVICE; without\n"
		"either, any runtime whose variables it sets), has no other runtime the\n"
		"profile sets variables for, and --no-runtime-check is not given: nothing\n"
		"is launched.\n"
		"The child gets XLAUNCH_RUN_ID, XLAUNCH_RUN_DIR and XLAUNCH_REPORT (a file\n"
		"to append JSON report lines to).  XLAUNCH_SAMPLE_MS sets how often the\n"
		"process group's memory is sampled (default 100; 0: off).\n",
	.options = run_options,
	XL_CMD_OPTS(struct xl_run_opts, &run_defaults),
	.run = cmd_run,
};
