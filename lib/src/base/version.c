/* SPDX-License-Identifier: MIT */
/* The library's own version, for programs that compare it with the recd/version.h they were
 * compiled against. */
#include "recd/version.h"

#include "recd/common.h"

const char *recd_version_string(void) { return RECD_VERSION_STRING; }

unsigned recd_version_number(void) { return RECD_VERSION_NUMBER; }

const char *recd_version(void) { return RECD_VERSION_STRING; }
