/* SPDX-License-Identifier: MIT */
/*
 * tbbt-init's image root (image-int.h): made ready for a build (empty, or holding a
 * previous tbbt-init image that --force removes by its manifest's made lines, newest
 * first, and nothing else), marked with the marker file, and kept apart from the
 * manifest (a manifest inside the image it describes is refused).  The objects of the
 * image are image.c's.
 */
#include "aging/image-int.h"
#include "aging/plan-int.h"

#include <errno.h>
#include <glib.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ns/manifest.h"
#include "util/outfile.h"
#include "util/util.h"

#define MARKER TBBT__IMAGE_MARKER
#define fail tbbt__image_fail

/* Removes what the manifest text's made lines list, newest first. */
static int remove_listed(struct build *b, const char *mpath, const char *text)
{
    char **lines = g_strsplit(text, "\n", -1);
    GString *bytes = g_string_new(NULL);
    const char *raw;
    char kind;
    int rc = 0, is_made;

    for (gint i = (gint)g_strv_length(lines) - 1; i >= 0 && rc == 0; i--) {
        if ((is_made = tbbt_manifest_made(lines[i], &kind, bytes, &raw)) < 0) {
            rc = fail(b, TBBT_E_SYNTAX, "--force: the previous manifest '%s' has a bad "
                      "path '%s'; nothing else removed", mpath, raw);
        } else if (is_made && (rc = b->ops->remove_made(b->be, bytes->str, kind == 'd')) < 0) {
            rc = fail(b, rc, "--force: cannot remove '%s' (made by the previous run): %s; "
                      "nothing else removed", bytes->str, strerror(-rc));
        }
    }
    g_string_free(bytes, TRUE);
    g_strfreev(lines);
    return rc;
}

/* Removes what the previous manifest's made lines list, newest first. */
static int remove_previous(struct build *b)
{
    char *mpath = NULL, *text = NULL, *marker = NULL;
    GError *gerr = NULL;
    int rc = b->ops->read_marker(b->be, &marker);

    if (rc < 0)
        return fail(b, rc, "cannot read the marker %s/%s: %s", b->o->root, MARKER,
                    strerror(-rc));
    mpath = g_strstrip(marker);
    if (!*mpath) {
        g_free(marker);
        return fail(b, -EINVAL, "the marker %s/%s is empty", b->o->root, MARKER);
    }
    if (!g_file_get_contents(mpath, &text, NULL, &gerr)) {
        rc = fail(b, -ENOENT, "cannot read the previous manifest '%s' (from %s/%s): %s", mpath,
                  b->o->root, MARKER, gerr->message);
        g_error_free(gerr);
        g_free(marker);
        return rc;
    }
    rc = remove_listed(b, mpath, text);
    g_free(text);
    g_free(marker);
    if (rc == 0 && (rc = b->ops->remove_marker(b->be)) < 0)
        rc = fail(b, rc, "cannot remove %s/%s: %s", b->o->root, MARKER, strerror(-rc));
    return rc;
}

int tbbt__image_prepare_root(struct build *b)
{
    bool marker;
    int rc;
    char *abs_manifest, *text;

    if ((rc = b->ops->root_empty(b->be, &marker)) < 0)
        return fail(b, rc, "cannot list the root '%s': %s", b->o->root, strerror(-rc));
    if (marker && !b->o->force)
        return fail(b, -EEXIST, "the root '%s' holds a tbbt-init image: --force removes it",
                    b->o->root);
    if (!marker && !rc)
        return fail(b, -EEXIST, "the root '%s' is not empty and holds no tbbt-init image: "
                    "refusing to write there", b->o->root);
    if (marker && ((rc = remove_previous(b)) < 0 ||
                   (rc = b->ops->root_empty(b->be, &marker)) < 0))
        return rc < 0 && !b->errbuf[0] ? fail(b, rc, "cannot list the root '%s': %s",
                                              b->o->root, strerror(-rc)) : rc;
    if (!rc)
        return fail(b, -ENOTEMPTY, "the root '%s' still holds files tbbt-init did not make "
                    "(left as they are)", b->o->root);
    abs_manifest = g_canonicalize_filename(b->o->manifest, NULL);
    text = g_strconcat(abs_manifest, "\n", NULL);
    rc = b->ops->write_marker(b->be, text);
    g_free(text);
    g_free(abs_manifest);
    if (rc < 0 && b->be->stage == TBBT__IMAGE_AT_WRITE)
        return fail(b, rc, "cannot write the marker: %s", strerror(-rc));
    if (rc < 0)
        return fail(b, rc, "cannot write %s/%s: %s", b->o->root, MARKER, strerror(-rc));
    return 0;
}

/* Whether path is the file *root (same device and inode). */
static bool same_file(const char *path, const struct stat *root)
{
    struct stat st;

    return stat(path, &st) == 0 && st.st_dev == root->st_dev && st.st_ino == root->st_ino;
}

/*
 * Whether path (after its symbolic links, as the manifest will be written) is the
 * directory *root or lies beneath it: the device and inode of the file and of each
 * directory above its real path are compared with the root's, so a symlinked root,
 * a symlinked manifest or a bind mount cannot hide it.
 */
static bool under_dir(const char *path, const struct stat *root)
{
    int rc = 0;
    char *target = tbbt_outfile_resolve(path, &rc), *dir, *real, *p;
    bool inside;

    if (!target)
        return false;
    inside = same_file(target, root);
    dir = g_path_get_dirname(target);
    real = realpath(dir, NULL);     /* a missing directory: the manifest's open says so */
    p = real ? g_strdup(real) : NULL;
    while (p && !inside) {
        char *up;

        inside = same_file(p, root);
        if (strcmp(p, "/") == 0)
            break;
        up = g_path_get_dirname(p);
        g_free(p);
        p = up;
    }
    g_free(p);
    free(real);
    g_free(dir);
    g_free(target);
    return inside;
}

/* The manifest must not be part of the image it describes (a local root only). */
int tbbt__image_manifest_outside(struct build *b)
{
    const struct tbbt_image_opts *o = b->o;
    struct stat root;
    bool inside;

    if (o->server || stat(o->root, &root) < 0)  /* a root that is not there: open says so */
        return 0;
    inside = under_dir(o->manifest, &root);
    if (inside)
        return fail(b, -EINVAL, "the manifest '%s' is inside the root '%s': put it elsewhere "
                    "(--manifest)", o->manifest, o->root);
    return 0;
}

