/*
 * targets.h - the fuzz targets: each takes arbitrary bytes, runs one parser
 * (and what consumes its result) over them, and returns normally or aborts
 * on an internal inconsistency.  The libFuzzer harnesses (fuzz_NAME.c) and
 * the unit tests that replay known inputs both call them; they are test
 * code, not part of any module's interface.
 */
#ifndef XLAUNCH_TESTS_FUZZ_TARGETS_H
#define XLAUNCH_TESTS_FUZZ_TARGETS_H

#include "common/common.h"

/* A PEP 440 version: the normal form parses back to an equal version. */
int xl_fuzz_version(const uint8_t *data, size_t len);
/* A specifier set, tried against a few versions and printed back. */
int xl_fuzz_specifier(const uint8_t *data, size_t len);
/* A marker expression, evaluated on this host with extra "tpu". */
int xl_fuzz_marker(const uint8_t *data, size_t len);
/* A METADATA / PKG-INFO document. */
int xl_fuzz_metadata(const uint8_t *data, size_t len);
/* The text of /proc/driver/nvidia/version or /sys/module/nvidia/version:
 * a version read is digits and dots.  Returns 1 when one was read. */
int xl_fuzz_nvidia(const uint8_t *data, size_t len);
/* A flag string: the first byte picks the variable and --timing, the rest
 * (up to the first NUL) is the value.  Returns the number of reports. */
int xl_fuzz_lint(const uint8_t *data, size_t len);
/* The bundle cache's text (bundle/summary.c): one interpreter's block read back. */
int xl_fuzz_bundle_cache(const uint8_t *data, size_t len);
/* One profile file, without following extends (no files are read), with
 * each of its candidates, rendered as JSON and as an environment.  Returns
 * 0, or -1 when the bytes are refused. */
int xl_fuzz_profile(const uint8_t *data, size_t len);
/* The bytes up to the first newline (at most 64) as a profile name,
 * resolved by name on the profile path as it stands (the fuzz harness
 * makes it empty, with no data directory): a message and an exit code,
 * never a crash.  Returns the exit code. */
int xl_fuzz_profile_name(const uint8_t *data, size_t len);

/* A command line: the first byte picks a command (env, exec, run, profile,
 * flags, probe, calib, bundle), the rest are its words, one per line.
 * Parsed level by level, subcommands found by prefix; nothing is run. */
int xl_fuzz_args(const uint8_t *data, size_t len);

/* Output lines of a child through the compile watch with the real patterns
 * of etc/outcomes.yaml: the first byte picks the stream split, each line
 * arrives a little later than the one before; then the verdict, the
 * manifest object and the summary.  The same bytes then go through the
 * outcome scanner (OOM and peer_exit lines) and are classified.  Returns the
 * compilations counted. */
int xl_fuzz_compile(const uint8_t *data, size_t len);
/* A cache directory's key file: the bytes up to the first NUL are
 * NAME=VALUE lines of a launch's environment, the rest the file; compared
 * for every runtime.  Returns the result of the comparison (-1, 0, 1). */
int xl_fuzz_cachestamp(const uint8_t *data, size_t len);
/* A store location: shown without its password, never longer than what
 * was given, with its scheme, unchanged when it has no user part and no
 * parameter. */
int xl_fuzz_location(const uint8_t *data, size_t len);

/* A name in XLA's dump directory: the first byte says whether it is a
 * directory, the rest (up to a NUL) is the name.  A module's name is a
 * part of the file's name, its id the digits after module_.  Returns the
 * kind (enum xl_dump_file). */
int xl_fuzz_dumpname(const uint8_t *data, size_t len);
/* An HLO module's text (first byte odd) or an ENTRY line (even): the
 * parameters kept are at most XL_HLO_MAX_PARAMS and no more than the line
 * has, each with a name, a type and its place among all, found there by
 * it, and an entry is the same as its copy.
 * Returns the number of parameters, -1 when none was read. */
int xl_fuzz_hloentry(const uint8_t *data, size_t len);

/* --set and --flag arguments, one per line ("flag " before one makes it a
 * --flag): those xl_override_valid accepts make a layer that loads, and
 * one with printable values only always does. */
int xl_fuzz_override(const uint8_t *data, size_t len);

#endif
