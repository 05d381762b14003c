/* SPDX-License-Identifier: MIT */
/* A recd_sink that writes to a file descriptor, retrying short writes and EINTR. */
#ifndef RECD_FD_SINK_H
#define RECD_FD_SINK_H

#include "recd/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The returned sink's ctx points at fd_storage, which must outlive the sink. */
RECD_API recd_sink recd_fd_sink(int *fd_storage);

/* Writes all of data to fd; 0 or a negative errno. */
RECD_API int recd_write_all(int fd, const void *data, size_t len);

#ifdef __cplusplus
}
#endif
#endif
