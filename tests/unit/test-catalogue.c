/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the protocol catalogue (docs/protocol-catalogue.md): the rows as proto
 * and trace see them agree with each other and with the names, numbers and kinds the
 * tools have always used; the status lists give rpcgen's values full and short names.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "proto/mount.h"
#include "proto/nfs2.h"
#include "proto/nfs3.h"
#include "proto/proto.h"
#include "trace/trace.h"

#define B(f) ((uint64_t)1 << (f))

static const int progs[] = {TBBT_PROG_NFS2, TBBT_PROG_NFS3, TBBT_PROG_MNT1, TBBT_PROG_MNT3};

/* Every row: numbers from 0 without a gap, the same name in proto and trace, need within
 * call, the kind and flags tables agreeing with the rows, XDR routines present. */
static void test_rows_agree(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
        int p = progs[i], n = tbbt_prog_nprocs(p);

        for (int proc = 0; proc < TBBT_PROC_MAX; proc++) {
            const struct tbbt_proc_desc *d = tbbt_proc_desc(p, proc);
            const struct tbbt_proto_proc *r = tbbt_proto_proc(p, (uint32_t)proc);

            assert_int_equal(d != NULL, proc < n);
            assert_int_equal(r != NULL, proc < n);
            if (!d)
                continue;
            assert_string_equal(d->name, r->name);
            assert_string_equal(d->name, tbbt_proc_name(p, proc));
            assert_int_equal(tbbt_proc_by_name(p, d->name), proc);
            assert_int_equal(d->need & ~d->call, 0);
            assert_int_equal(d->flags, r->flags);
            assert_int_equal(d->ns, r->ns);
            assert_int_equal(tbbt_proc_kind(p, proc), d->kind);
            assert_int_equal(tbbt_proc_flags(p, proc), d->flags);
            assert_non_null(r->xargs);
            assert_non_null(r->xres);
        }
    }
    assert_int_equal(tbbt_prog_nprocs(TBBT_PROG_NFS3), 22);
    assert_int_equal(tbbt_prog_nprocs(TBBT_PROG_NFS2), 18);
    assert_int_equal(tbbt_prog_nprocs(TBBT_PROG_MNT1), 6);
    assert_int_equal(tbbt_prog_nprocs(TBBT_PROG_MNT3), 6);
    assert_null(tbbt_proc_desc(TBBT_PROG_NFS3, 22));
    assert_null(tbbt_proc_desc(TBBT_PROG_NONE, 0));
    assert_int_equal(tbbt_proc_kind(7, 1), TBBT_NS_OP_NONE);
}

/* Names, labels, kinds and flags of a few rows, as the tools printed them before. */
static void test_known_rows(void **state)
{
    char buf[TBBT_PROC_LABEL_MAX];
    struct tbbt_trace_rec rec = {.prog = TBBT_PROG_NFS3, .proc = NFSPROC3_READDIRPLUS};

    (void)state;
    assert_string_equal(tbbt_proc_name(TBBT_PROG_NFS3, NFSPROC3_READDIRPLUS), "readdirplus");
    assert_string_equal(tbbt_proc_label(TBBT_PROG_NFS2, NFSPROC_WRITECACHE, NULL, 0),
                        "v2.writecache");
    assert_string_equal(tbbt_proc_label(TBBT_PROG_MNT3, MOUNTPROC3_MNT, NULL, 0), "mnt3.mnt");
    assert_string_equal(tbbt_proc_label(TBBT_PROG_NFS3, NFSPROC3_COMMIT, NULL, 0), "commit");
    assert_string_equal(tbbt_proc_label(TBBT_PROG_NFS2, 31, buf, sizeof(buf)), "v2.31");
    assert_int_equal(tbbt_ns_op(&rec), TBBT_NS_OP_READDIRPLUS);
    rec.prog = TBBT_PROG_NFS2;
    rec.proc = NFSPROC_ROOT;
    assert_int_equal(tbbt_ns_op(&rec), TBBT_NS_OP_NONE);
    rec.proc = NFSPROC_STATFS;
    assert_int_equal(tbbt_ns_op(&rec), TBBT_NS_OP_ATTR);
    rec.prog = TBBT_PROG_MNT1;
    rec.proc = MOUNTPROC_MNT;
    assert_int_equal(tbbt_ns_op(&rec), TBBT_NS_OP_MNT);
    assert_true(tbbt_proc_flags(TBBT_PROG_NFS3, NFSPROC3_READ) & TBBT_PROTO_FL_BULK_REPLY);
    assert_true(tbbt_proc_flags(TBBT_PROG_NFS3, NFSPROC3_WRITE) & TBBT_PROTO_FL_BULK_CALL);
    assert_true(tbbt_proc_flags(TBBT_PROG_NFS2, NFSPROC_WRITE) & TBBT_PROTO_FL_BULK_CALL);
    assert_true(tbbt_proc_flags(TBBT_PROG_NFS2, NFSPROC_ROOT) & TBBT_PROTO_FL_OBSOLETE);
    assert_false(tbbt_proc_flags(TBBT_PROG_MNT3, MOUNTPROC3_DUMP) & TBBT_PROTO_FL_STATUS);
    assert_true(tbbt_proc_desc(TBBT_PROG_NFS3, NFSPROC3_LOOKUP)->ns & TBBT_PROTO_NS_NEWOBJ);
    assert_int_equal(tbbt_proc_desc(TBBT_PROG_NFS3, NFSPROC3_RENAME)->need,
                     B(TBBT_F_FH) | B(TBBT_F_NAME) | B(TBBT_F_FH2) | B(TBBT_F_NAME2));
}

/* One status list: rpcgen's values, full names in proto, short names in trace. */
static void test_status_names(void **state)
{
    int32_t st = 0;

    (void)state;
    assert_string_equal(tbbt_proto_status_name(TBBT_PROTO_NFS3, NFS3ERR_JUKEBOX),
                        "NFS3ERR_JUKEBOX");
    assert_string_equal(tbbt_status_name(TBBT_PROG_NFS3, NFS3ERR_JUKEBOX), "JUKEBOX");
    assert_string_equal(tbbt_status_name(TBBT_PROG_NFS3, NFS3ERR_BAD_COOKIE), "BAD_COOKIE");
    assert_string_equal(tbbt_status_name(TBBT_PROG_NFS2, NFSERR_WFLUSH), "WFLUSH");
    assert_string_equal(tbbt_status_name(TBBT_PROG_MNT1, MNT3ERR_NOTSUPP), "NOTSUPP");
    assert_string_equal(tbbt_status_name(TBBT_PROG_NFS2, NFS_OK), "OK");
    assert_null(tbbt_status_name(TBBT_PROG_NFS2, NFS3ERR_XDEV));
    assert_int_equal(tbbt_status_by_name(TBBT_PROG_NFS3, "NOTEMPTY", &st), 0);
    assert_int_equal(st, NFS3ERR_NOTEMPTY);
    assert_int_equal(tbbt_proto_key(TBBT_PROTO_PROG_NFS, 3), TBBT_PROTO_NFS3);
    assert_int_equal(tbbt_proto_key(TBBT_PROTO_PROG_MOUNT, 1), TBBT_PROTO_MNT1);
    assert_int_equal(tbbt_proto_key(TBBT_PROTO_PROG_MOUNT, 2), 0);
    assert_int_equal(tbbt_proto_program(TBBT_PROTO_MNT3), TBBT_PROTO_PROG_MOUNT);
    assert_int_equal(tbbt_proto_version(TBBT_PROTO_NFS2), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_agree),
        cmocka_unit_test(test_known_rows),
        cmocka_unit_test(test_status_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
