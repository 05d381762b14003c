/* SPDX-License-Identifier: MIT */
/* Matching client certificate names against the identities: section (identity.h). */
#include "identity.h"

#include <fnmatch.h>

const recd_identity_rule *identity_rule_of(const recd_config *cfg, const char *const *names,
                                           size_t count, const char **matched)
{
    for (size_t r = 0; r < cfg->identity_count; r++)
        for (size_t i = 0; i < count; i++)
            if (fnmatch(cfg->identities[r].pattern, names[i], 0) == 0) {
                *matched = names[i];
                return &cfg->identities[r];
            }
    return NULL;
}

const recd_identity_rule *identity_rule_for(const recd_config *cfg, const char *identity)
{
    const char *matched;
    return identity_rule_of(cfg, &identity, 1, &matched);
}

bool identity_may_open(const recd_identity_rule *rule, const char *session_key)
{
    return fnmatch(rule->sessions, session_key, 0) == 0;
}
