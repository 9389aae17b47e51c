/*
 * gpuschedd attacked on 127.0.0.1, as one who may reach its port would: the driver of the attack
 * test (tests/integration/test_attack.c), which asserts what must hold, and of bench_attack,
 * which prints the latencies. It measures; it asserts nothing itself.
 *
 * Phases, each against the real daemon with a real store:
 *  1. fill: the inventory's nodes and the pods, submitted by tenants team-a and team-b;
 *  2. resources: slow oversized uploads (anonymous and admin, declared and chunked) and idle
 *     connections (some sending half a request line), from their own client addresses
 *     (127.0.1.x, 127.0.2.x), while /healthz and extender filter are timed from 127.0.0.1 and the
 *     daemon's RSS is sampled;
 *  3. reads: kube-scheduler's filter + prioritize and another tenant's POST /v1/pods timed,
 *     first with nothing else running (the yardstick), then while concurrent /metrics scrapers
 *     (the metrics token, each from an address of its own) and a tenant listing up to 5,000 pods
 *     at a fixed rate read;
 *  4. strangers: every state-changing route without credentials, with a wrong token and with
 *     another scheme, from 127.0.3.1; the state before and after; the reads without a token
 *     searched for names;
 *  5. kill -9 at random moments while a tenant submits (sending again what got no answer), each
 *     time restarted; then every pod acknowledged is looked for, and every card's holders
 *     summed.
 */
#ifndef GS_TEST_ATTACK_H
#define GS_TEST_ATTACK_H

#include "load.h"

#include <stddef.h>

struct attack_opts {
    int nodes, pods; /* 5,000 and 20,000 */
    int idle, slow;  /* 2,000 idle connections, 128 slow uploads */
    int scrapers;    /* 8 */
    int list_per_s;  /* 20 lists a second */
    int kills;       /* kill -9 this many times */
    double phase_s;  /* seconds of phases 2 and 3 each */
    unsigned seed;   /* the kill moments */
};

struct attack_report {
    /* 1 */
    double fill_s;
    int filled;
    /* 2 */
    struct l_lat healthz, filter_under_conns;
    long rss_before_kb, rss_max_kb;
    int idle_open_start; /* idle connections open once all were opened */
    int idle_open_end;   /* ... still open at the end of the phase (headerTimeoutSeconds 5) */
    int one_client_tried, one_client_open; /* connections from one more address, kept open */
    int slow_status[6]; /* slow uploads answered 2xx..5xx ([4] 4xx ...), [0] cut off */
    /* 3 */
    struct l_lat extender_quiet, post_quiet;   /* the same calls first, with no reader running */
    struct l_lat extender, post, list, scrape; /* scrape: those answered 200 */
    size_t scrapes_refused;                    /* answered 429: over metrics.scrapesPerSecond */
    char daemon_side[512]; /* the daemon's own histograms over the run so far (/metrics) */
    /* 4 */
    int strangers_tried, strangers_let_in; /* requests; those not answered 401/403/429 */
    int state_changed;                     /* the state differs after them */
    int names_shown;                       /* names found in reads without a token */
    /* 5 */
    int kills_done, acked, lost, double_booked, running_checked;
};

/* attack_opts_default() - the scale above; a sanitizer build (@sanitized) a fifth of it. */
void attack_opts_default(struct attack_opts *o, int sanitized);
/* attack_run() - run every phase (progress on stderr). Return: 0; -1 when the daemon could not be
 * set up or started (then @r says what got done). */
int attack_run(const struct attack_opts *o, struct attack_report *r);
void attack_report_print(struct attack_report *r, const struct attack_opts *o);
void attack_report_free(struct attack_report *r);

#endif
