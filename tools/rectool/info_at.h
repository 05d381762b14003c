/* SPDX-License-Identifier: MIT */
/* `rectool info FILE --at T` (info_at.c): the seek point of T and the state in effect then. */
#ifndef RECTOOL_INFO_AT_H
#define RECTOOL_INFO_AT_H

/* Prints what path holds at time at_text (the format's unit, or a duration); an exit code. */
int rt_info_at(const char *path, const char *at_text);

#endif
