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

#endif
