/* SPDX-License-Identifier: MIT */
/* Crash recovery of a part larger than the 1 GiB that used to be read into memory: a .rec part
 * of 1 GiB and a bit (sparse on disk) is cut to whole blocks and finalized like a small one. */
#include "testutil.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recd/recovery.h"
#include "recd/samp_rec.h"

static void large_rec_part_is_finalized(void **state)
{
    tu_root_fixture *f = *state;
    const uint64_t blocks = ((UINT64_C(1) << 30) / RECD_REC_ONFOOT_BLOCK_SIZE) + 1000;
    const uint64_t keep = RECD_REC_HEADER_SIZE + blocks * RECD_REC_ONFOOT_BLOCK_SIZE;
    int fd = open(tu_at(f->root, "big.rec.part"), O_WRONLY | O_CREAT | O_EXCL, 0644);
    assert_true(fd >= 0);
    uint8_t header[RECD_REC_HEADER_SIZE];
    recd_rec_header_encode(RECD_REC_TYPE_ONFOOT, header);
    assert_int_equal(write(fd, header, sizeof header), (ssize_t)sizeof header);
    assert_int_equal(ftruncate(fd, (off_t)(keep + 5)), 0); /* zero blocks and a cut last one */
    close(fd);

    recd_recover_summary s;
    memset(&s, 0, sizeof s);
    assert_int_equal(recd_recover_root(f->root_fd, NULL, &s), 1);
    assert_int_equal(s.count, 1);
    if (s.files[0].action != RECD_RECOVER_FINALIZED)
        fail_msg("%s: %s", recd_recover_action_name(s.files[0].action), s.files[0].message);
    assert_int_equal(s.files[0].size_after, keep);
    assert_int_equal(s.records_kept, blocks);
    recd_recover_summary_free(&s);
    struct stat st;
    assert_int_equal(stat(tu_at(f->root, "big.rec"), &st), 0);
    assert_int_equal((uint64_t)st.st_size, keep);
    assert_false(tu_exists(tu_at(f->root, "big.rec.part")));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(large_rec_part_is_finalized, tu_root_setup, tu_root_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
