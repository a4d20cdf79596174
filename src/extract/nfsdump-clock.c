/* SPDX-License-Identifier: MIT */
/*
 * The times of nfsdump lines on the clocks of stepclock.h (the nfsdump
 * text-trace reader's clock-step handling, shared through nfsdump-int.h):
 * lines are events in file order even where their times go back (files
 * concatenated or merged, a clock set back), so each line's time is made
 * monotonic before it reaches the core; the steps back and the long gaps
 * forward are reported once at the end, in the log and in the summary.
 */
#include <glib.h>

#include "extract/nfsdump-int.h"
#include "util/util.h"

/*
 * The time of a line that goes to the core, on the clocks of stepclock.h:
 * returns its record time, and in *pair_ns the time the reply timeout runs
 * on.  Lines are events in file order, their times may step back (files
 * concatenated or merged, a clock set back): the pairing and the trace
 * follow the file order.
 */
uint64_t tbbt__nd_line_time(struct nd_state *s, uint64_t ts_ns, uint64_t *pair_ns)
{
    uint64_t back = tbbt__stepclock_stats(&s->clock)->steps_back;
    uint64_t t = tbbt__stepclock_next(&s->clock, ts_ns, pair_ns);

    if (back == 0 && tbbt__stepclock_stats(&s->clock)->steps_back == 1)
        s->first_step = g_strdup_printf("'%s' line %" G_GUINT64_FORMAT, s->path,
                                        (guint64)s->file_lines);
    return t;
}

/* A WARN line when the lines' clock stepped back, an INFO line when it jumped forward. */
void tbbt__nd_report_clock(const struct nd_state *s)
{
    const struct tbbt__stepclock_stats *st = tbbt__stepclock_stats(&s->clock);

    if (st->steps_back)
        tbbt_log(TBBT_LOG_WARN,
                 "nfsdump: the time goes back %" G_GUINT64_FORMAT " time%s between lines "
                 "(largest step %.6f s, first at %s): lines pair in file order, and the times "
                 "from each step on are shifted later by it to stay in order (%" G_GUINT64_FORMAT
                 " lines, by %.6f s in all)",
                 (guint64)st->steps_back, st->steps_back == 1 ? "" : "s",
                 (double)st->step_back_max_ns / 1e9, s->first_step, (guint64)st->shifted,
                 (double)st->shift_ns / 1e9);
    if (st->jumps_forward)
        tbbt_log(TBBT_LOG_INFO,
                 "nfsdump: %" G_GUINT64_FORMAT " gap%s between lines longer than the reply "
                 "timeout (longest %.6f s): kept in the times, not counted as waiting for "
                 "replies", (guint64)st->jumps_forward, st->jumps_forward == 1 ? "" : "s",
                 (double)st->jump_forward_max_ns / 1e9);
}

void tbbt__nd_clock_json(struct nd_state *s, struct tbbt_json *j)
{
    const struct tbbt__stepclock_stats *st = tbbt__stepclock_stats(&s->clock);

    tbbt_json_kv_uint(j, "clock_steps_back", st->steps_back);
    tbbt_json_kv_uint(j, "clock_step_back_max_ns", st->step_back_max_ns);
    tbbt_json_kv_uint(j, "clock_shift_ns", st->shift_ns);
    tbbt_json_kv_uint(j, "clock_shifted_lines", st->shifted);
    tbbt_json_kv_uint(j, "clock_jumps_forward", st->jumps_forward);
    tbbt_json_kv_uint(j, "clock_jump_forward_max_ns", st->jump_forward_max_ns);
}
