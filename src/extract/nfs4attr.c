/* SPDX-License-Identifier: MIT */
/*
 * NFSv4 attributes (fattr4: a bitmap4 and the values of the attributes it
 * names, in attribute-number order; RFC 7530 5, RFC 5661 5, RFC 7862 12) into
 * the trace's struct tbbt_fattr and struct tbbt_sattr (nfs4attr.h).
 *
 * Each value is read with the rpcgen routine of its fattr4_<name> type, from
 * a table of every attribute nfs4.x has (0..80): the values before the ones
 * tbbt keeps must be read to be passed.  An attribute number past the table
 * stops the walk (its length is unknown): what was read before it is kept.
 */
#include "extract/nfs4attr.h"

#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "proto/nfs4.h"
#include "proto/xdrmem.h"

#define A(NAME, name) [FATTR4_##NAME] = (xdrproc_t)xdr_fattr4_##name,
static const xdrproc_t attr_procs[] = {
    A(SUPPORTED_ATTRS, supported_attrs) A(TYPE, type) A(FH_EXPIRE_TYPE, fh_expire_type)
    A(CHANGE, change) A(SIZE, size) A(LINK_SUPPORT, link_support)
    A(SYMLINK_SUPPORT, symlink_support) A(NAMED_ATTR, named_attr) A(FSID, fsid)
    A(UNIQUE_HANDLES, unique_handles) A(LEASE_TIME, lease_time) A(RDATTR_ERROR, rdattr_error)
    A(ACL, acl) A(ACLSUPPORT, aclsupport) A(ARCHIVE, archive) A(CANSETTIME, cansettime)
    A(CASE_INSENSITIVE, case_insensitive) A(CASE_PRESERVING, case_preserving)
    A(CHOWN_RESTRICTED, chown_restricted) A(FILEHANDLE, filehandle) A(FILEID, fileid)
    A(FILES_AVAIL, files_avail) A(FILES_FREE, files_free) A(FILES_TOTAL, files_total)
    A(FS_LOCATIONS, fs_locations) A(HIDDEN, hidden) A(HOMOGENEOUS, homogeneous)
    A(MAXFILESIZE, maxfilesize) A(MAXLINK, maxlink) A(MAXNAME, maxname) A(MAXREAD, maxread)
    A(MAXWRITE, maxwrite) A(MIMETYPE, mimetype) A(MODE, mode) A(NO_TRUNC, no_trunc)
    A(NUMLINKS, numlinks) A(OWNER, owner) A(OWNER_GROUP, owner_group)
    A(QUOTA_AVAIL_HARD, quota_avail_hard) A(QUOTA_AVAIL_SOFT, quota_avail_soft)
    A(QUOTA_USED, quota_used) A(RAWDEV, rawdev) A(SPACE_AVAIL, space_avail)
    A(SPACE_FREE, space_free) A(SPACE_TOTAL, space_total) A(SPACE_USED, space_used)
    A(SYSTEM, system) A(TIME_ACCESS, time_access) A(TIME_ACCESS_SET, time_access_set)
    A(TIME_BACKUP, time_backup) A(TIME_CREATE, time_create) A(TIME_DELTA, time_delta)
    A(TIME_METADATA, time_metadata) A(TIME_MODIFY, time_modify)
    A(TIME_MODIFY_SET, time_modify_set) A(MOUNTED_ON_FILEID, mounted_on_fileid)
    A(DIR_NOTIF_DELAY, dir_notif_delay) A(DIRENT_NOTIF_DELAY, dirent_notif_delay)
    A(DACL, dacl) A(SACL, sacl) A(CHANGE_POLICY, change_policy) A(FS_STATUS, fs_status)
    A(FS_LAYOUT_TYPES, fs_layout_types) A(LAYOUT_HINT, layout_hint)
    A(LAYOUT_TYPES, layout_types) A(LAYOUT_BLKSIZE, layout_blksize)
    A(LAYOUT_ALIGNMENT, layout_alignment) A(FS_LOCATIONS_INFO, fs_locations_info)
    A(MDSTHRESHOLD, mdsthreshold) A(RETENTION_GET, retention_get)
    A(RETENTION_SET, retention_set) A(RETENTEVT_GET, retentevt_get)
    A(RETENTEVT_SET, retentevt_set) A(RETENTION_HOLD, retention_hold)
    A(MODE_SET_MASKED, mode_set_masked) A(SUPPATTR_EXCLCREAT, suppattr_exclcreat)
    A(FS_CHARSET_CAP, fs_charset_cap) A(CLONE_BLKSIZE, clone_blksize)
    A(SPACE_FREED, space_freed) A(CHANGE_ATTR_TYPE, change_attr_type) A(SEC_LABEL, sec_label)
};
#undef A
#define NATTRS (sizeof attr_procs / sizeof attr_procs[0])

/* Storage for any one attribute's value (its variable parts are pointers). */
union value {
    uint64_t u64;
    uint32_t u32;
    fattr4_fsid fsid;
    fattr4_owner owner;
    fattr4_rawdev rawdev;
    fattr4_filehandle fh;
    nfstime4 time;
    settime4 settime;
    char any[256];
};
_Static_assert(sizeof(fs_locations4) <= 256 && sizeof(fs_locations_info4) <= 256 &&
               sizeof(mdsthreshold4) <= 256 && sizeof(sec_label4) <= 256 &&
               sizeof(change_policy4) <= 256 && sizeof(fs4_status) <= 256,
               "an attribute's value is larger than union value");

/* What one walk fills, and where. */
struct sink {
    struct tbbt_fattr *attr;        /* NULL: setting attributes (sattr) */
    struct tbbt_sattr *sattr;
    uint8_t *fh;                    /* the FILEHANDLE attribute's bytes (NULL: not wanted) */
    uint32_t *fh_len;               /* its length; set only when the attribute is there */
};

uint32_t tbbt__nfs4_owner_id(const char *s, uint32_t len)
{
    uint32_t v = 0, i = 0;

    if (len >= 4 && memcmp(s, "root", 4) == 0 && (len == 4 || s[4] == '@'))
        return 0;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
        if (v > (UINT32_MAX - 9) / 10)
            return TBBT_NFS4_NOBODY;
        v = v * 10 + (uint32_t)(s[i] - '0');
    }
    return i > 0 && (i == len || s[i] == '@') ? v : TBBT_NFS4_NOBODY;
}

static uint64_t time_ns(const nfstime4 *t)
{
    if (t->seconds < 0 || t->nseconds >= 1000000000u ||
        (uint64_t)t->seconds > UINT64_MAX / 1000000000u - 1)
        return 0;
    return (uint64_t)t->seconds * 1000000000u + t->nseconds;
}

/* Stores attribute n's value v into the sink. */
static void keep(struct sink *k, unsigned n, const union value *v)
{
    struct tbbt_fattr *a = k->attr;
    struct tbbt_sattr *s = k->sattr;
    uint32_t id = 0;

    if (n == FATTR4_OWNER || n == FATTR4_OWNER_GROUP)
        id = tbbt__nfs4_owner_id(v->owner.utf8string_val, v->owner.utf8string_len);
    if (n == FATTR4_FILEHANDLE && k->fh && v->fh.nfs_fh4_len <= NFS4_FHSIZE) {
        if (v->fh.nfs_fh4_len)                      /* an empty handle has no buffer */
            memcpy(k->fh, v->fh.nfs_fh4_val, v->fh.nfs_fh4_len);
        *k->fh_len = v->fh.nfs_fh4_len;
        return;
    }
    if (a) {
        switch (n) {
        case FATTR4_TYPE: a->type = v->u32; break;
        case FATTR4_SIZE: a->size = v->u64; break;
        case FATTR4_FSID: a->fsid = v->fsid.major << 32 ^ v->fsid.minor; break;
        case FATTR4_FILEID: a->fileid = v->u64; break;
        case FATTR4_MODE: a->mode = v->u32; break;
        case FATTR4_NUMLINKS: a->nlink = v->u32; break;
        case FATTR4_OWNER: a->uid = id; break;
        case FATTR4_OWNER_GROUP: a->gid = id; break;
        case FATTR4_RAWDEV:
            a->rdev = (uint64_t)v->rawdev.specdata1 << 32 | v->rawdev.specdata2;
            break;
        case FATTR4_SPACE_USED: a->used = v->u64; break;
        case FATTR4_TIME_ACCESS: a->atime_ns = time_ns(&v->time); break;
        case FATTR4_TIME_METADATA: a->ctime_ns = time_ns(&v->time); break;
        case FATTR4_TIME_MODIFY: a->mtime_ns = time_ns(&v->time); break;
        default: break;
        }
        return;
    }
    switch (n) {
    case FATTR4_SIZE: s->mask |= TBBT_SA_SIZE; s->size = v->u64; break;
    case FATTR4_MODE: s->mask |= TBBT_SA_MODE; s->mode = v->u32; break;
    case FATTR4_OWNER: s->mask |= TBBT_SA_UID; s->uid = id; break;
    case FATTR4_OWNER_GROUP: s->mask |= TBBT_SA_GID; s->gid = id; break;
    case FATTR4_TIME_ACCESS_SET:
    case FATTR4_TIME_MODIFY_SET: {
        bool atime = n == FATTR4_TIME_ACCESS_SET;
        if (v->settime.set_it == SET_TO_CLIENT_TIME4) {
            s->mask |= atime ? TBBT_SA_ATIME : TBBT_SA_MTIME;
            *(atime ? &s->atime_ns : &s->mtime_ns) = time_ns(&v->settime.settime4_u.time);
        } else {
            s->mask |= atime ? TBBT_SA_ATIME_SERVER : TBBT_SA_MTIME_SERVER;
        }
        break;
    }
    default: break;
    }
}

/* Walks f's values into k; false if they do not decode (what was read is kept). */
static bool walk(const fattr4 *f, struct sink *k)
{
    static const char none[1];
    const char *vals = f->attr_vals.attrlist4_val ? f->attr_vals.attrlist4_val : none;
    XDR x;
    bool ok = true;

    /* (an empty list has no buffer: no NULL + 0 in the stream's arithmetic) */
    tbbt_xdrmem_create(&x, vals, f->attr_vals.attrlist4_val ? f->attr_vals.attrlist4_len : 0);
    for (u_int w = 0; ok && w < f->attrmask.bitmap4_len; w++) {
        uint32_t bits = f->attrmask.bitmap4_val[w];

        while (ok && bits) {
            unsigned n = 32 * w + (unsigned)__builtin_ctz(bits);
            union value v;

            bits &= bits - 1;
            if (n >= NATTRS)
                return false;
            memset(&v, 0, sizeof v);
            ok = attr_procs[n](&x, &v);
            if (ok)
                keep(k, n, &v);
            xdr_free(attr_procs[n], (char *)&v);
        }
    }
    return ok;
}

bool tbbt__nfs4_fattr(const fattr4 *f, struct tbbt_fattr *out)
{
    struct sink k = {.attr = out};

    memset(out, 0, sizeof(*out));
    return walk(f, &k);
}

bool tbbt__nfs4_fattr_fh(const fattr4 *f, struct tbbt_fattr *out, uint8_t *fh, uint32_t *fh_len)
{
    struct sink k = {.attr = out, .fh = fh, .fh_len = fh_len};

    memset(out, 0, sizeof(*out));
    *fh_len = UINT32_MAX;
    return walk(f, &k);
}

bool tbbt__nfs4_sattr(const fattr4 *f, struct tbbt_sattr *out)
{
    struct sink k = {.sattr = out};

    memset(out, 0, sizeof(*out));
    return walk(f, &k);
}

uint64_t tbbt__nfs4_bitmap(const bitmap4 *b)
{
    uint64_t v = 0;

    if (b->bitmap4_len > 0)
        v = b->bitmap4_val[0];
    if (b->bitmap4_len > 1)
        v |= (uint64_t)b->bitmap4_val[1] << 32;
    return v;
}
