/* SPDX-License-Identifier: MIT */
/*
 * tbbt-convert's pass B alone (extract.h, tbbt_convert_ids()): TBBT-IDs and the
 * hierarchy map for a raw trace that some other program wrote (tbbt-synth).  With
 * hier.c, execorder.c and correct.c it makes the library tbbt_extract_ids, which
 * needs only the namespace model, the trace format and util: no capture reading,
 * no libpcap, no libtirpc.  TBBT paper 3.1-3.2.
 */
#include "extract/extract.h"
#include "extract/hier.h"

int tbbt_convert_ids(const char *raw_trace, const char *final_trace, const char *map_path,
                     uint64_t *map_entries, char *errbuf, size_t errlen)
{
    struct tbbt_ns *ns = NULL;
    int rc = tbbt__hier_run(raw_trace, final_trace, map_path, NULL, &ns, errbuf, errlen);

    if (rc < 0)
        return rc;
    if (map_entries) {
        struct tbbt_ns_stats st;
        tbbt_ns_stats(ns, &st);
        *map_entries = st.map_entries;
    }
    tbbt_ns_free(ns);
    return 0;
}
