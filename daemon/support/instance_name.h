/* SPDX-License-Identifier: MIT */
/* This recd's name in file names ({instance} in output.path_template): nats.instance when set,
 * else the host name, so the parts of one session written by several fleet members can be told
 * apart and put back in order. */
#ifndef RECD_DAEMON_INSTANCE_NAME_H
#define RECD_DAEMON_INSTANCE_NAME_H

#include "support/config.h"

/* 1..64 bytes of [A-Za-z0-9_-]: any other byte of the configured name or the host name becomes
 * '_'. The host name is read once. */
const char *instance_name(const recd_config *cfg);

#endif
