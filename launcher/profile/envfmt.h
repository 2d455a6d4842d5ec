/* envfmt.h - output formats of `xlaunch env` (internal to the launcher). */
#ifndef XLAUNCH_ENVFMT_H
#define XLAUNCH_ENVFMT_H

#include "launcher/launcher.h"

enum xl_env_format { XL_FMT_SH, XL_FMT_JSON, XL_FMT_DOTENV, XL_FMT_K8S };

/* 'value' quoted for POSIX sh: safe to eval for any byte string; caller frees. */
char *xl_sh_quote(const char *s);
int xl_env_format_parse(const char *s, enum xl_env_format *out);
/* The managed variables of p in the given format; caller frees. */
char *xl_env_render(const struct xl_profile *p, enum xl_env_format fmt);

#endif
