/* SPDX-License-Identifier: MIT */
/* The writer's default file operations: lib's part_file, the atomic store of a part's sidecar
 * included (see file_ops.h). */
#include "file_ops.h"

const writer_file_ops writer_file_ops_real = {
    .create = recd_part_create,
    .append = recd_part_append,
    .pwrite = recd_part_pwrite,
    .sync = recd_part_sync,
    .finalize = recd_part_finalize,
    .close_fd = recd_part_close_fd,
    .store_text = recd_confined_store_text,
    .remove_text = recd_confined_unlink,
};
