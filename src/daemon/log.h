/*
 * gpuschedd's log: one logfmt line per event on stderr.
 */
#ifndef GSD_LOG_H
#define GSD_LOG_H

/*
 * gsd_log() - write "ts=... level=@level msg=@msg k1=v1 ..." with one write(2).
 * The variadic part is key, value pairs of strings ending with NULL; values are quoted when they
 * hold a space, '=', '"' or a control byte. Thread-safe.
 */
void gsd_log(const char *level, const char *msg, ...);

/*
 * gsd_log_warning() - a struct gs_diag warning callback: gsd_log("warn", @ud, "warning", @msg).
 * @ud: the line's msg (a constant string), as the diag's warn_ud.
 */
void gsd_log_warning(void *ud, const char *msg);

/*
 * gsd_log_hold() - keep the calling thread's lines from now on (up to 32 KiB, then they are
 * written) until gsd_log_flush() writes them with one write(2): the scheduler thread logs a
 * few lines per pod, and one write per batch costs it less than one per line.
 */
void gsd_log_hold(void);
/* gsd_log_flush() - write the calling thread's held lines, and hold no more. */
void gsd_log_flush(void);

/* gsd_log_hash() - FNV-1a of @s (NULL: ""): what is kept of a refusal logged once, so the same
 * refusal met again is known in a few bytes and not said again. */
static inline unsigned long long gsd_log_hash(const char *s)
{
    unsigned long long h = 14695981039346656037ULL;
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

#endif
