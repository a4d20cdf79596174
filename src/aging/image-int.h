/* SPDX-License-Identifier: MIT */
/*
 * The seam between tbbt-init's planning (image.c: which objects, their sizes, the
 * synthetic objects, the aging order, clones, the manifest) and the file system
 * operations that carry it out: an ops table with one implementation per file,
 * image-local.c (system calls beneath a local directory) and image-nfs.c (NFSv3 RPCs
 * to a server, pipelined).  docs/tbbt-init.md.
 *
 * Paths handed to the operations are relative to the current clone directory (the
 * root itself with one clone), components joined by '/', each one valid
 * (tbbt_ns_name_ok()); "." is the clone directory.  Paths of the root operations
 * (remove_made, the marker) are relative to the root.  Every path is borrowed for
 * the call only.
 *
 * Errors: an operation returns 0 or a negative errno.  A backend may carry out an
 * operation after it returned (the NFS backend pipelines its calls; the local one
 * writes file data on writer threads): a failure found later is returned by a later
 * operation (at the latest by barrier(), sync() or end_clone()), and then the backend
 * has written its one-line reason into the shared error buffer itself (the first
 * error wins; image.c only writes one when the buffer is still empty).  An operation
 * that fails at once leaves the reason to image.c and says in be->stage which step
 * failed.  After an error the build stops: the backend only has to be closed.
 *
 * Threading: every operation is called from the thread that builds the image.
 */
#ifndef TBBT_AGING_IMAGE_INT_H
#define TBBT_AGING_IMAGE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aging/image.h"

#define TBBT__IMAGE_MARKER ".tbbt-init"

/* Which step of an operation failed (struct tbbt__image_be.stage). */
enum tbbt__image_stage {
    TBBT__IMAGE_AT_NONE = 0,
    TBBT__IMAGE_AT_PARENT,      /* the directory of the path cannot be reached */
    TBBT__IMAGE_AT_CREATE,      /* making the object (or opening it) */
    TBBT__IMAGE_AT_ATTRS,       /* setting its mode or owner (the object exists) */
    TBBT__IMAGE_AT_WRITE,       /* writing its data (the object exists) */
};

/* The mode and owner of an object at trace start; known false: the backend's defaults
 * (files 0644, directories 0755, owned by whoever runs the build). */
struct tbbt__image_attrs {
    bool known;
    uint32_t mode, uid, gid;
};

/* Flags of create(). */
#define TBBT__IMAGE_DATA_NOW 1u   /* write len bytes now (may complete later) */
#define TBBT__IMAGE_DATA_SYNC 2u  /* write len bytes now and have the blocks allocated
                                     before the next object is made (spacers) */

/* The part of every backend's context that image.c sees (the first member). */
struct tbbt__image_be {
    const struct tbbt__image_backend_ops *ops;
    const struct tbbt_image_opts *o;    /* borrowed for the build */
    struct tbbt_image_stats *st;        /* bytes and appends are counted by the backend
                                         * (atomically: writer threads) */
    uint64_t done_bytes;                /* data written so far (atomic; progress line) */
    int stage;                          /* enum tbbt__image_stage of the last failure */
    char *errbuf;                       /* the build's error buffer (see above) */
    size_t errlen;
};

struct tbbt__image_backend_ops {
    const char *name;
    uint32_t version;
    /*
     * Opens the root (o->root; with o->server the server path under o->export) and
     * checks it is a directory.  Returns the context (given: close()) or NULL with
     * *rc and the reason in errbuf.
     */
    struct tbbt__image_be *(*open)(const struct tbbt_image_opts *o, struct tbbt_image_stats *st,
                                   char *errbuf, size_t errlen, int *rc);
    /* Waits for nothing, frees everything; NULL is a no-op. */
    void (*close)(struct tbbt__image_be *be);
    /* 1 if the root holds nothing but the marker and lost+found, 0 if it holds more,
     * or -errno; *has_marker. */
    int (*root_empty)(struct tbbt__image_be *be, bool *has_marker);
    /* The marker's text (given: g_free()), read without following a symlink. */
    int (*read_marker)(struct tbbt__image_be *be, char **text);
    /* Makes the marker (exclusively) holding text; stage CREATE or WRITE on failure. */
    int (*write_marker)(struct tbbt__image_be *be, const char *text);
    int (*remove_marker)(struct tbbt__image_be *be);
    /* Removes path (relative to the root) that an earlier build made: a directory when
     * dir.  0 also when it is not there or its directory cannot be reached beneath the
     * root without a symlink. */
    int (*remove_made)(struct tbbt__image_be *be, const char *path, bool dir);
    /* Starts a clone in dir (relative to the root, "." for the root itself), making it
     * first (mode 0755) when make; stage CREATE (make) or PARENT (open). */
    int (*begin_clone)(struct tbbt__image_be *be, const char *dir, bool make);
    /* Waits for everything of the clone; its first error. */
    int (*end_clone)(struct tbbt__image_be *be);
    /* Waits for everything submitted so far; the first error. */
    int (*barrier)(struct tbbt__image_be *be);
    /* The objects.  a may be NULL (defaults).  Exclusive: an existing name fails with
     * -EEXIST; nothing is followed through a symlink. */
    int (*mkdir)(struct tbbt__image_be *be, const char *path, const struct tbbt__image_attrs *a);
    int (*create)(struct tbbt__image_be *be, const char *path, const struct tbbt__image_attrs *a,
                  uint64_t len, unsigned flags);
    int (*link)(struct tbbt__image_be *be, const char *first, const char *path);
    int (*symlink)(struct tbbt__image_be *be, const char *path, const char *target,
                   const struct tbbt__image_attrs *a);
    int (*mkfifo)(struct tbbt__image_be *be, const char *path, const struct tbbt__image_attrs *a);
    /* Sets the mode and owner of the directory path (the clone directory: ".") */
    int (*set_dir_attrs)(struct tbbt__image_be *be, const char *path,
                         const struct tbbt__image_attrs *a);
    /* Appends len bytes to the file path in one session; sync: have them allocated now
     * (aging). */
    int (*append)(struct tbbt__image_be *be, const char *path, uint64_t len, bool sync);
    /* Sets the size of the file path to size (it is that size already: drops blocks
     * held beyond the end). */
    int (*trim)(struct tbbt__image_be *be, const char *path, uint64_t size);
    int (*unlink)(struct tbbt__image_be *be, const char *path);
    /* The file system's size, bytes used and block size (waits for what is pending). */
    int (*usage)(struct tbbt__image_be *be, uint64_t *capacity, uint64_t *used,
                 uint64_t *block);
    /* Everything written so far on stable storage. */
    int (*sync)(struct tbbt__image_be *be);
};

extern const struct tbbt__image_backend_ops tbbt__image_local_ops;
extern const struct tbbt__image_backend_ops tbbt__image_nfs_ops;

/* Path bytes for messages, escaped as in the map and the manifest (given: g_free()). */
char *tbbt__image_shown(const char *path);

/*
 * What one name of the root's listing tells root_empty(): TBBT__IMAGE_ROOT_OTHER makes
 * the root not empty, TBBT__IMAGE_ROOT_MARKER is the marker; ".", ".." and lost+found
 * (mkfs's) are TBBT__IMAGE_ROOT_IGNORED.  Both backends list the root this way.
 */
enum tbbt__image_root_name {
    TBBT__IMAGE_ROOT_IGNORED,
    TBBT__IMAGE_ROOT_MARKER,
    TBBT__IMAGE_ROOT_OTHER,
};
enum tbbt__image_root_name tbbt__image_root_name(const char *name);

/*
 * Builds with the backend ops instead of the one the options choose (the unit tests'
 * seam: a recording fake).  Otherwise as tbbt_image_build().
 */
int tbbt__image_build_with(const struct tbbt__image_backend_ops *ops,
                           const struct tbbt_image_opts *o, struct tbbt_image_stats *st,
                           char *errbuf, size_t errlen);

#endif
