/* SPDX-License-Identifier: MIT */
/* Placeholder until the nfsdump text reader lands: recognizes nothing. */
#include "extract/conv-int.h"
#include "util/util.h"

static bool nd_probe(const uint8_t *h, size_t len)
{
    (void)h;
    (void)len;
    return false;
}

static int nd_run(struct tbbt__conv *c, const char *const *paths, int n, char *errbuf,
                  size_t errlen)
{
    (void)c;
    (void)paths;
    (void)n;
    (void)errbuf;
    (void)errlen;
    return TBBT_E_BADREC;
}

static void nd_summary(struct tbbt__conv *c, struct tbbt_json *j)
{
    (void)c;
    (void)j;
}

static void nd_fini(struct tbbt__conv *c)
{
    (void)c;
}

const struct tbbt__source_ops tbbt__source_nfsdump = {
    .name = "nfsdump", .version = 1, .probe = nd_probe, .run = nd_run,
    .summary = nd_summary, .fini = nd_fini,
};
