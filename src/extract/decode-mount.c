/* SPDX-License-Identifier: MIT */
/*
 * MOUNT v1 (RFC 1094 Appendix A) and v3 (RFC 1813 Appendix I) call arguments
 * and reply results of the six procedures NULL, MNT, DUMP, UMNT, UMNTALL and
 * EXPORT into trace record fields, with the rpcgen routines of mount.x (see
 * decode-int.h for the conventions).
 *
 * MNT and UMNT calls: dirpath.  MNT reply: status (v1: a Unix errno, v3:
 * mountstat3) and the root handle -> new_fh (the v3 auth flavors are read and
 * dropped).  DUMP and EXPORT replies: the number of mount entries / exports
 * -> res_count, set once the whole list decoded; the names themselves are not
 * kept.  The lists are walked element by element.
 */
#include "extract/decode-int.h"
#include "proto/mount.h"
#include "proto/proto.h"

#define ITEM(d, fn, obj) tbbt__dec_item((d), (xdrproc_t)(fn), (obj))

/* mountres3_ok.auth_flavors, decoded into caller storage. */
struct flavors {
    u_int len;
    int *val;
};

static bool_t flavors_xdr(XDR *x, struct flavors *f)
{
    return xdr_array(x, (char **)&f->val, &f->len, MNT_MAXFLAVORS, sizeof(int),
                     (xdrproc_t)xdr_int);
}

static bool dirpath_call(struct tbbt__dec *d)
{
    char buf[MNTPATHLEN + 1];
    uint32_t len;

    if (!tbbt__dec_string(d, (xdrproc_t)xdr_dirpath, buf, &len))
        return false;
    tbbt__dec_set_str(d, buf, len, &d->rec->dirpath, TBBT_F_DIRPATH);
    return true;
}

static bool mnt1_reply(struct tbbt__dec *d)
{
    uint32_t status;
    fhandle fh;

    if (!tbbt__dec_u32(d, &status))
        return false;
    tbbt__dec_set_status(d, (int32_t)status);
    if (status != 0)
        return true;
    if (!ITEM(d, xdr_fhandle, fh))
        return false;
    tbbt__dec_set_fh(d, fh, FHSIZE, &d->rec->new_fh, TBBT_F_NEW_FH);
    return true;
}

static bool mnt3_reply(struct tbbt__dec *d)
{
    char buf[FHSIZE3];
    int flavbuf[MNT_MAXFLAVORS];
    fhandle3 fh = { .fhandle3_len = 0, .fhandle3_val = buf };
    struct flavors flav = { .len = 0, .val = flavbuf };
    mountstat3 st;

    /* a status not in RFC 1813 Appendix I's mountstat3 is malformed: no status */
    if (!ITEM(d, xdr_mountstat3, &st) ||
        (!tbbt_proto_status_name(TBBT_PROTO_MNT3, (int)st) && !tbbt__dec_range(d, 1, 0)))
        return false;
    tbbt__dec_set_status(d, st);
    if (st != MNT3_OK)
        return true;
    if (!ITEM(d, xdr_fhandle3, &fh))
        return false;
    tbbt__dec_set_fh(d, buf, fh.fhandle3_len, &d->rec->new_fh, TBBT_F_NEW_FH);
    return ITEM(d, flavors_xdr, &flav);
}

static bool dec_name(struct tbbt__dec *d)
{
    char buf[MNTNAMLEN + 1];
    uint32_t len;

    return tbbt__dec_string(d, (xdrproc_t)xdr_name, buf, &len);
}

static bool dec_dirpath(struct tbbt__dec *d)
{
    char buf[MNTPATHLEN + 1];
    uint32_t len;

    return tbbt__dec_string(d, (xdrproc_t)xdr_dirpath, buf, &len);
}

/*
 * An XDR linked list (RFC 4506 4.19, optional-data): its items one by one with
 * item; *n gets their number.
 */
static bool walk_list(struct tbbt__dec *d, tbbt__dec_fn item, uint32_t *n)
{
    bool follows;

    for (*n = 0;; (*n)++) {
        if (!tbbt__dec_follows(d, &follows))
            return false;
        if (!follows)
            return true;
        if (!item(d))
            return false;
    }
}

/* mountbody: hostname, directory. */
static bool dec_mountbody(struct tbbt__dec *d)
{
    return dec_name(d) && dec_dirpath(d);
}

/* exportnode: directory, groups (a list of names). */
static bool dec_exportnode(struct tbbt__dec *d)
{
    uint32_t n;

    return dec_dirpath(d) && walk_list(d, dec_name, &n);
}

/* mountlist and exports: the number of entries, set once the whole list decoded. */
static bool count_list(struct tbbt__dec *d, tbbt__dec_fn item)
{
    uint32_t n;

    if (!walk_list(d, item, &n))
        return false;
    d->rec->res_count = n;
    TBBT_SET(d->rec, TBBT_F_RES_COUNT);
    return true;
}

static bool dump_reply(struct tbbt__dec *d)
{
    return count_list(d, dec_mountbody);
}

static bool export_reply(struct tbbt__dec *d)
{
    return count_list(d, dec_exportnode);
}

#undef TBBT__DEC_MNT1
#define TBBT__DEC_MNT1 TBBT__DEC_ROW
const struct tbbt__dec_proc tbbt__dec_mnt1[TBBT__DEC_NPROCS] = {
#include "proto/catalogue.def"
};
#undef TBBT__DEC_MNT1
#undef TBBT__DEC_MNT3
#define TBBT__DEC_MNT1 TBBT__DEC_SKIP
#define TBBT__DEC_MNT3 TBBT__DEC_ROW
const struct tbbt__dec_proc tbbt__dec_mnt3[TBBT__DEC_NPROCS] = {
#include "proto/catalogue.def"
};
