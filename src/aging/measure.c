/* SPDX-License-Identifier: MIT */
/*
 * Aging metrics (see measure.h).  Placeholder until the FIEMAP walker lands.
 */
#include "aging/measure.h"

#include <errno.h>

int tbbt_measure_tree(const char *dir, struct tbbt_measure *m, char *errbuf, size_t errlen)
{
    (void)dir;
    *m = (struct tbbt_measure){ 0 };
    snprintf(errbuf, errlen, "--measure is not implemented yet");
    return -ENOSYS;
}

void tbbt_measure_print(const struct tbbt_measure *m, bool json, FILE *out)
{
    (void)m;
    (void)json;
    (void)out;
}
