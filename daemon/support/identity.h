/* SPDX-License-Identifier: MIT */
/* Client certificate identities (the identities: section): which configured pattern a
 * certificate's names match, and which session keys that pattern may open. Patterns are
 * fnmatch(3) patterns without FNM_PATHNAME ("*" also matches '/'), the first match wins. */
#ifndef RECD_DAEMON_IDENTITY_H
#define RECD_DAEMON_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/* The first rule whose pattern matches one of names (tried in order: CN, then DNS SANs), with
 * the matching name in *matched; NULL when none does. */
const recd_identity_rule *identity_rule_of(const recd_config *cfg, const char *const *names,
                                           size_t count, const char **matched);
/* The rule of one identity (a name matched before), or NULL. */
const recd_identity_rule *identity_rule_for(const recd_config *cfg, const char *identity);
bool identity_may_open(const recd_identity_rule *rule, const char *session_key);

#endif
