/*
 * knowledge.h - the flag knowledge over runtime releases: which releases of
 * jaxlib, torch_xla and jax register each flag of the families that record
 * releases (etc/flags/releases.yaml, and `releases`, `variants`, `removed`,
 * `replaced_by` in etc/flags/FAMILY.yaml), compiled into tables at build
 * time by tools/gen-catalog.c, next to the catalog (flags.h).
 *
 * The catalog (xl_flagdef_at) describes each family as its pinned release
 * registers it; these tables add the flags other releases register and
 * what differs.  Everything here is integers and offsets into one string
 * pool (xl_kpool), so the tables cost the program no relocations at start.
 */
#ifndef XLAUNCH_LAUNCHER_FLAGS_KNOWLEDGE_H
#define XLAUNCH_LAUNCHER_FLAGS_KNOWLEDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The string pool: every string below is an offset into it; offset 0 is
 * the empty string (none).  A list of values is its items one after the
 * other, each NUL-terminated, ended by an empty item. */
extern const char xl_kpool[];

static inline const char *xl_kstr(uint32_t off)
{
	return xl_kpool + off;
}

/* An entry of the catalog (flags.h, xl_flagdef_at), as its family's pinned
 * release registers it; sorted by name, then family. */
struct xl_kdef {
	uint32_t name, def, desc, reader; /* strings (0: none) */
	uint32_t values, timing_allows;   /* lists (0: none) */
	int16_t order;           /* registration order upstream, -1 unknown */
	uint8_t family, type, tags, parser;
	bool icase;
	bool has_def;            /* def is a default (pool offset 0 is "", a default too) */
};

extern const struct xl_kdef xl_kdefs[];

/* The list at pool offset off as a NULL-terminated array of its items
 * (pointers into the pool), allocated; NULL for 0.  (launcher/flags/
 * catalog.c: the one function of these tables that allocates.) */
const char *const *xl_klist(uint32_t off);

/* A package whose releases the knowledge lists (jaxlib, torch_xla, jax). */
struct xl_kpackage {
	uint32_t name;
	uint16_t first;          /* its releases: xl_kreleases[first .. first + n), oldest first */
	uint16_t n;
	uint16_t nknown;         /* the first nknown are inside the knowledge; the rest are
				  * listed releases it has no facts of (newer ones) */
	uint16_t pinned;         /* the release (index within the package) the catalog describes */
};

struct xl_krelease {
	uint32_t version, date, commit;
	uint32_t xla;            /* the openxla/xla commit it was built from, or 0 */
	uint32_t libtpu;         /* the libtpu version it asks for, or 0 */
	uint8_t pkg;             /* index into xl_kpackages */
	bool known;
	bool observed;           /* known by the flag names its wheel registers (releases.yaml
				  * `observed`), not from its sources: its flags have the types
				  * of the newest release read from sources */
};

/* Per family (same index as xl_families): the packages whose releases make
 * its axis.  Bit shift[k] + i of a mask is release i of package pkg[k]
 * (i < nknown); a family without one (pkg[0] < 0) records no releases. */
struct xl_kfamily {
	int8_t pkg[2];
	uint8_t shift[2];
};

/* A flag of a family that records releases, sorted by name, then family. */
struct xl_kflag {
	uint32_t name;
	int32_t def;             /* its entry in the catalog (registered by the pinned
				  * release), or -1 */
	uint64_t rel;            /* the releases that register it */
	uint16_t family;
	uint16_t var, nvar;      /* its variants: xl_kvariants[var .. var + nvar) */
	uint8_t type;            /* enum xl_ftype, as the entry describes it */
	uint8_t icase;
	uint8_t tags;            /* XL_FTAG_* */
	uint32_t reader, values, desc; /* as the entry describes it (0: none) */
	uint32_t replaced_by;    /* the successor upstream names, or 0 */
	uint32_t evidence;       /* where upstream says so, or 0 */
	uint32_t removed;        /* the upstream change that dropped it, or 0 */
};

/* Releases where a flag's type, reader or values differ from its entry. */
struct xl_kvariant {
	uint64_t rel;
	uint8_t type, icase;
	uint32_t reader, values;
};

extern const struct xl_kpackage xl_kpackages[];
extern const size_t xl_nkpackages;
extern const struct xl_krelease xl_kreleases[];
extern const size_t xl_nkreleases;
extern const struct xl_kfamily xl_kfamilies[];
extern const struct xl_kflag xl_kflags[];
extern const size_t xl_nkflags;
extern const struct xl_kvariant xl_kvariants[];
extern const size_t xl_nkvariants;

#endif
