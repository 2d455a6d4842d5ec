/*
 * probe.h - what is installed and whether it is alive: the backend probe
 * (cpu, opencl, cuda, pjrt) and the version-bundle check (PEP 440, package
 * metadata, bundle rules).
 */
#ifndef XLAUNCH_PROBE_H
#define XLAUNCH_PROBE_H

#include "common/common.h"

#include <jansson.h>

/* ======================================================================
 * Backend probe
 * ====================================================================== */


/* (end of the backend probe section) */













/* ======================================================================
 * Version bundles: PEP 440, package metadata, bundle check
 * ====================================================================== */


/* (end of the bundle section) */

#endif
