/*
 * Tests of the MIG module (gpusched/mig.h, gpusched/migpolicy.h). Run from the source root: the
 * shipped table data/mig/mig_profiles.csv and the real nvidia-smi outputs in tests/data/mig/ are
 * read at fixed relative paths; other inputs are written to /tmp.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "gpusched/catalog.h"
#include "gpusched/config.h"
#include "gpusched/diag.h"
#include "gpusched/mig.h"
#include "gpusched/migpolicy.h"
#include "gpusched/rng.h"

#include "common/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TABLE_CSV "data/mig/mig_profiles.csv"
#define RAW       "tests/data/mig/"
#define SEED      "tests/data/mig-cluster-policy.yaml"
#define LINE_MAX_ 512

/* A real output and the model it was taken on. */
struct raw {
    const char *path, *model;
    int lgipp_all; /* its -lgipp lists every profile of our table */
};

static const struct raw raws[] = {
    {RAW "a100_40gb_nvidia_smi_mig_lgip_lgipp_raw.txt", "A100-SXM4-40GB", 0},
    {RAW "a100_40gb_mig_user_guide_examples_EXCERPT.txt", "A100-SXM4-40GB", 1},
    {RAW "a100_80gb_pcie_nvidia_smi_mig_lgip_lgi_raw.txt", "A100-SXM4-80GB", 0},
    {RAW "h100_80gb_hbm3_nvidia_smi_mig_lgip_lgipp_lgi_lci_raw.txt", "H100-SXM5-80GB", 1},
    {RAW "h100_nvl_94gb_nvidia_smi_mig_lgip_lgipp_raw.txt", "H100-NVL-94GB", 1},
    {RAW "a30_24gb_nvidia_smi_mig_lgipp_lgip_lgi_raw.txt", "A30", 1},
    {RAW "h200_141gb_nvidia_smi_mig_lgip_lgipp_raw.txt", "H200", 1},
};
#define NRAWS ((int)(sizeof(raws) / sizeof(raws[0])))

static int model(const char *name)
{
    int m = gs_mig_model_find(name);
    if (m < 0) {
        print_error("no MIG model %s\n", name);
        fail();
    }
    return m;
}

static int prof(int m, const char *name)
{
    int p = gs_mig_profile_find(m, name, -1);
    if (p < 0) {
        print_error("%s has no profile %s\n", gs_mig_model_at(m)->name, name);
        fail();
    }
    return p;
}

/* profile_by_id() - the profile of model @m with GPU instance profile ID @id, or -1. */
static int profile_by_id(int m, int id)
{
    const struct gs_mig_model *mm = gs_mig_model_at(m);
    for (int i = 0; i < mm->nprofiles; i++)
        if (mm->profiles[i].id == id)
            return i;
    return -1;
}

static void assert_has(const char *text, const char *needle)
{
    if (!strstr(text, needle)) {
        print_error("expected \"%s\" in: %s\n", needle, text);
        fail();
    }
}

/* gib_matches() - "19.62" (nvidia-smi's two-decimal GiB) is @mib rounded: |mib/1024 - gib| <=
 * 0.005, compared in integers (hundredths of GiB times 1024). */
static int gib_matches(const char *gib, uint32_t mib)
{
    int whole = 0, frac = 0;
    if (sscanf(gib, "%d.%2d", &whole, &frac) != 2 || strlen(strchr(gib, '.') + 1) != 2)
        return 0;
    long centi = whole * 100L + frac, diff = (long)mib * 100L - centi * 1024L;
    return labs(diff) <= 512;
}

/* split_csv() - split @line in place at commas outside double quotes, unquoting fields. */
static int split_csv(char *line, char **f, int max)
{
    int n = 0, quoted = 0;
    char *out = line;
    f[n++] = out;
    for (char *p = line; *p && *p != '\n'; p++) {
        if (*p == '"')
            quoted = !quoted;
        else if (*p == ',' && !quoted && n < max) {
            *out++ = '\0';
            f[n++] = out;
        } else
            *out++ = *p;
    }
    *out = '\0';
    return n;
}

/* check_row() - one CSV row (13 fields) against profile @p of model @m. */
static void check_row(char **f, int m, int p)
{
    const struct gs_mig_profile *pr = &gs_mig_model_at(m)->profiles[p];
    char pl[32];
    assert_string_equal(f[0], gs_mig_model_at(m)->name);
    assert_string_equal(f[1], pr->name);
    assert_int_equal(atoi(f[2]), pr->id);
    assert_int_equal(atoi(f[3]), pr->compute_slices);
    assert_int_equal(atoi(f[4]), pr->memory_slices);
    assert_true(gs_mig_profile_placements(m, p, pl, sizeof(pl)) > 0);
    assert_string_equal(f[5], pl);
    assert_int_equal(atoi(f[6]), pr->max_instances);
    assert_int_equal(atoi(f[7]), pr->sm_count);
    assert_true(gib_matches(f[8], pr->memory_mib));
    assert_int_equal(strtoul(f[9], NULL, 10), pr->memory_mib);
    assert_int_equal(atoi(f[10]), pr->ofa);
    assert_true(f[11][0] && f[12][0]); /* every row names its sources */
}

/* The compiled table and the shipped CSV hold the same rows in the same order. */
static void test_table_equals_csv(void **state)
{
    (void)state;
    char line[LINE_MAX_], *f[16];
    FILE *in = fopen(TABLE_CSV, "r");
    int m = 0, p = 0, rows = 0;
    assert_non_null(in);
    assert_non_null(fgets(line, sizeof(line), in));
    assert_int_equal(split_csv(line, f, 16), 13);
    assert_string_equal(f[5], "placements");
    while (fgets(line, sizeof(line), in)) {
        assert_int_equal(split_csv(line, f, 16), 13);
        if (p == gs_mig_model_at(m)->nprofiles) {
            m++;
            p = 0;
        }
        assert_true(m < gs_mig_model_count());
        check_row(f, m, p++);
        rows++;
    }
    fclose(in);
    assert_int_equal(m, gs_mig_model_count() - 1);
    assert_int_equal(p, gs_mig_model_at(m)->nprofiles);
    assert_int_equal(rows, 40);
}

/* check_model() - the invariants every model of the table keeps. */
static void check_model(int m)
{
    const struct gs_mig_model *mm = gs_mig_model_at(m);
    const struct gs_gpu_model *cat = gs_catalog_at(gs_catalog_find(mm->name, -1));
    int full = -1;
    assert_non_null(cat);
    assert_true(mm->nprofiles > 0 && mm->nprofiles <= GS_MIG_PROFILES_MAX);
    for (int p = 0; p < mm->nprofiles; p++) {
        const struct gs_mig_profile *pr = &mm->profiles[p];
        assert_int_equal(pr->name[0] - '0', pr->compute_slices); /* "Ng.<mem>gb" */
        assert_int_equal(pr->memory_mib % 64, 0);
        assert_true(pr->starts != 0 && pr->max_instances > 0);
        for (int s = 0; s < GS_MIG_SLOTS_MAX; s++)
            if (pr->starts & (1u << s))
                assert_true(s + pr->memory_slices <= mm->memory_slices);
        for (int q = 0; q < p; q++) {
            assert_string_not_equal(pr->name, mm->profiles[q].name);
            assert_int_not_equal(pr->id, mm->profiles[q].id);
        }
        if (pr->memory_slices == mm->memory_slices)
            full = p;
        /* "+me" profiles and the full card are exactly the ones holding the OFA */
        assert_int_equal(pr->ofa, strstr(pr->name, "+me") != NULL || p == full);
    }
    assert_true(full >= 0);
    assert_int_equal(mm->profiles[full].compute_slices, mm->compute_slices);
    assert_true(mm->profiles[full].memory_mib <= cat->memory_mib);
    assert_true(mm->profiles[full].sm_count <= cat->sm_count);
    assert_non_null(mm->source);
}

static void test_table_invariants(void **state)
{
    (void)state;
    const char *want[] = {"A100-SXM4-40GB", "A100-SXM4-80GB", "H100-SXM5-80GB",
                          "H100-NVL-94GB",  "H200",           "A30"};
    assert_int_equal(gs_mig_model_count(), 6);
    for (int i = 0; i < 6; i++)
        assert_string_equal(gs_mig_model_at(i)->name, want[i]);
    for (int m = 0; m < gs_mig_model_count(); m++)
        check_model(m);
    assert_null(gs_mig_model_at(-1));
    assert_null(gs_mig_model_at(gs_mig_model_count()));
}

/* lgipp_line() - "GPU  0 Profile ID 19 Placements: {0,1,2,3,4,5,6}:1" into @id and "{...}:1". */
static int lgipp_line(const char *line, int *id, char *pl, size_t size)
{
    const char *p = strstr(line, "Profile ID"), *b = strchr(line, '{'), *e;
    if (!p || !strstr(line, "Placement") || !b || !(e = strstr(b, "}:")))
        return 0;
    *id = atoi(p + strlen("Profile ID"));
    for (e += 2; isdigit((unsigned char)*e); e++)
        ;
    snprintf(pl, size, "%.*s", (int)(e - b), b);
    return 1;
}

/*
 * check_lgipp() - every -lgipp line of @path equals our placements of that profile ID on model
 * @m. Return: the number of lines checked; *@seen gets the profiles they named.
 */
static int check_lgipp(const char *path, int m, unsigned *seen)
{
    char line[LINE_MAX_], pl[32], ours[32];
    int id, n = 0;
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    *seen = 0;
    while (fgets(line, sizeof(line), in)) {
        if (!lgipp_line(line, &id, pl, sizeof(pl)))
            continue;
        int p = profile_by_id(m, id);
        if (p < 0) {
            print_error("%s: profile ID %d not in the %s table\n", path, id,
                        gs_mig_model_at(m)->name);
            fail();
        }
        gs_mig_profile_placements(m, p, ours, sizeof(ours));
        if (strcmp(pl, ours) != 0) {
            print_error("%s: %s ID %d: nvidia-smi %s, table %s\n", path, gs_mig_model_at(m)->name,
                        id, pl, ours);
            fail();
        }
        *seen |= 1u << p;
        n++;
    }
    fclose(in);
    return n;
}

/* Our placements equal every real -lgipp line, and the derived ones equal their source's. */
static void test_placements_equal_lgipp(void **state)
{
    (void)state;
    unsigned seen;
    int lines = 0;
    for (int i = 0; i < NRAWS; i++) {
        int m = model(raws[i].model), n = check_lgipp(raws[i].path, m, &seen);
        lines += n;
        if (raws[i].lgipp_all)
            assert_int_equal(seen, (1u << gs_mig_model_at(m)->nprofiles) - 1u);
    }
    assert_int_equal(lines, 5 + 7 + 7 + 7 + 5 + 7);
    /* Derived (data/mig/README.md): the A100 80GB has the A100 40GB's geometry under other
     * names (MIG User Guide, Table 6 note); the H200's, read off a real card, is the H100's
     * (Tables 7 and 8). */
    assert_int_equal(check_lgipp(raws[1].path, model("A100-SXM4-80GB"), &seen), 7);
    assert_int_equal(seen, 0x7fu);
    assert_int_equal(check_lgipp(raws[3].path, model("H200"), &seen), 7);
    assert_int_equal(seen, 0x7fu);
}

/* check_lgip_row() - one -lgip profile row and the CE/JPEG/OFA line under it, against model @m. */
static void check_lgip_row(const char *path, int m, const char *row, const char *under)
{
    char name[32], gib[16], p2p[8];
    int gpu, id, freen, total, sm, ce, jpeg, ofa;
    if (sscanf(row, "| %d MIG %31s %d %d/%d %15s %7s %d", &gpu, name, &id, &freen, &total, gib, p2p,
               &sm) != 8)
        return;
    assert_int_equal(sscanf(under, "| %d %d %d", &ce, &jpeg, &ofa), 3);
    const struct gs_mig_profile *pr = &gs_mig_model_at(m)->profiles[prof(m, name)];
    if (pr->id != id || pr->max_instances != total || pr->sm_count != sm || pr->ofa != ofa ||
        !gib_matches(gib, pr->memory_mib)) {
        print_error("%s: %s differs from the table (id %d, %d instances, %s GiB, %d SMs, OFA %d)\n",
                    path, name, id, total, gib, sm, ofa);
        fail();
    }
}

/* Every -lgip row of the real outputs matches our ID, instances, memory, SMs and OFA. */
static void test_profiles_equal_lgip(void **state)
{
    (void)state;
    int rows = 0;
    for (int i = 0; i < NRAWS; i++) {
        char prev[LINE_MAX_] = "", line[LINE_MAX_];
        FILE *in = fopen(raws[i].path, "r");
        assert_non_null(in);
        while (fgets(line, sizeof(line), in)) {
            if (strstr(prev, " MIG ") && strchr(prev, '/')) {
                check_lgip_row(raws[i].path, model(raws[i].model), prev, line);
                rows++;
            }
            snprintf(prev, sizeof(prev), "%s", line);
        }
        fclose(in);
    }
    assert_int_equal(rows, 5 + 6 + 7 + 7 + 5 + 7);
}

/* Every placement of every profile can be created on an empty card, and no other start can. */
static void test_every_placement(void **state)
{
    (void)state;
    struct gs_diag d;
    gs_diag_init(&d);
    for (int m = 0; m < gs_mig_model_count(); m++) {
        const struct gs_mig_model *mm = gs_mig_model_at(m);
        for (int p = 0; p < mm->nprofiles; p++)
            for (int s = 0; s < GS_MIG_SLOTS_MAX + 1; s++) {
                struct gs_mig_card c;
                char list[GS_MIG_LIST_MAX], want[32];
                unsigned mask;
                assert_int_equal(gs_mig_card_init(&c, m, GS_MIG_ALLOW_ALL), 0);
                int ok = s < GS_MIG_SLOTS_MAX && (mm->profiles[p].starts & (1u << s));
                int n = gs_mig_card_starts(&c, p, &mask);
                assert_int_equal(n, __builtin_popcount(mask));
                assert_int_equal(mask, mm->profiles[p].starts);
                assert_int_equal(gs_mig_card_create(&c, p, s, &d), ok ? 0 : -EINVAL);
                snprintf(want, sizeof(want), "%s@%d", mm->profiles[p].name, s);
                assert_true(gs_mig_card_list(&c, list, sizeof(list)) >= 0);
                assert_string_equal(list, ok ? want : "");
                assert_int_equal(c.mig_mode, ok);
            }
    }
    assert_has(d.msg, "cannot start at memory slice");
}

/* One run of `nvidia-smi mig -cgi` on an empty card, as a real output shows it. */
struct run {
    int model, n;
    char name[16][32]; /* profiles created, in order */
    int gi[16];        /* their GPU instance IDs */
    int start_of[64];  /* GPU instance ID -> start slot, from -lgi; -1 unknown */
    int failed_id;     /* profile ID the driver refused after them ("Insufficient Resources") */
    int final_only;    /* compare the final layout, not the order (the section says why) */
};

static void run_reset(struct run *r, int m, const char *marker)
{
    memset(r, 0, sizeof(*r));
    r->model = m;
    r->failed_id = -1;
    memset(r->start_of, 0xff, sizeof(r->start_of));
    r->final_only = marker && strstr(marker, "final layout only") != NULL;
}

/* run_line() - take what one output line says about the run. */
static void run_line(struct run *r, const char *line)
{
    char name[32];
    int gi, gpu, id, start, size;
    const char *u = strstr(line, "Unable to create a GPU instance");
    if (sscanf(line, "Successfully created GPU instance ID %d on GPU %d using profile MIG %31s",
               &gi, &gpu, name) == 3 &&
        r->n < 16 && gi >= 0 && gi < 64) {
        snprintf(r->name[r->n], sizeof(r->name[0]), "%s", name);
        r->gi[r->n++] = gi;
    } else if (u && sscanf(strstr(u, "using profile"), "using profile %d", &id) == 1) {
        r->failed_id = id;
    } else if (sscanf(line, "| %d MIG %31s %d %d %d:%d", &gpu, name, &id, &gi, &start, &size) ==
                   6 &&
               gi >= 0 && gi < 64) {
        r->start_of[gi] = start;
    }
}

/*
 * run_check() - replay @r with the best-fit allocator: each instance must land where the driver
 * put it (or, with final_only, the final layouts must be equal), and a profile the driver refused
 * must not fit either. Return: 1 when the run had anything to replay.
 */
static int run_check(const struct run *r)
{
    struct gs_mig_card c;
    int start;
    assert_int_equal(gs_mig_card_init(&c, r->model, GS_MIG_ALLOW_ALL), 0);
    for (int i = 0; i < r->n; i++) {
        int p = prof(r->model, r->name[i]), want = r->start_of[r->gi[i]];
        assert_int_equal(gs_mig_card_place(&c, p, &start, NULL), 0);
        if (want >= 0 && !r->final_only && start != want) {
            print_error("%s: %s #%d: driver %d, best fit %d\n", gs_mig_model_at(r->model)->name,
                        r->name[i], i + 1, want, start);
            fail();
        }
    }
    for (int i = 0; r->final_only && i < r->n; i++) {
        int k = 0, want = r->start_of[r->gi[i]];
        while (k < c.ninst && c.inst[k].start != want)
            k++;
        assert_true(k < c.ninst);
        assert_int_equal(c.inst[k].profile, prof(r->model, r->name[i]));
    }
    if (r->failed_id >= 0)
        assert_int_equal(gs_mig_card_place(&c, profile_by_id(r->model, r->failed_id), &start, NULL),
                         -ENOSPC);
    return r->n > 0 || r->failed_id >= 0;
}

/*
 * Best fit reproduces NVIDIA's driver: the real outputs create instances without saying where
 * ("-cgi 19,19,..."), and -lgi then shows where the driver put each one.
 */
static void test_best_fit_matches_driver(void **state)
{
    (void)state;
    int runs = 0;
    for (int i = 0; i < NRAWS; i++) {
        char line[LINE_MAX_];
        struct run r;
        FILE *in = fopen(raws[i].path, "r");
        assert_non_null(in);
        run_reset(&r, model(raws[i].model), NULL);
        while (fgets(line, sizeof(line), in)) {
            if (strncmp(line, "# ---", 5) == 0) {
                runs += run_check(&r);
                run_reset(&r, r.model, line);
            } else {
                run_line(&r, line);
            }
        }
        runs += run_check(&r);
        fclose(in);
    }
    /* guide examples 1, 2 (refused), 2 and 3; A100 80GB 3g+3g; H100 7x1g; A30 1g,1g,2g */
    assert_int_equal(runs, 7);
}

/* card_with() - a card of model @name holding @n instances of profile @pname at @starts. */
static struct gs_mig_card card_with(const char *name, const char *pname, const int *starts, int n)
{
    struct gs_mig_card c;
    int m = model(name);
    assert_int_equal(gs_mig_card_init(&c, m, GS_MIG_ALLOW_ALL), 0);
    for (int i = 0; i < n; i++)
        assert_int_equal(gs_mig_card_create(&c, prof(m, pname), starts[i], NULL), 0);
    return c;
}

/* 1g.10gb at 0, 1 and 5 leave five slices free, yet neither a 4g.40gb nor a 3g.40gb fits. */
static void test_fragmented_a100(void **state)
{
    (void)state;
    const int at[] = {0, 1, 5};
    struct gs_mig_card c = card_with("A100-SXM4-80GB", "1g.10gb", at, 3);
    int m = c.model, p3 = prof(m, "3g.40gb"), p4 = prof(m, "4g.40gb"), s, score;
    unsigned mask;
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(__builtin_popcount(~c.used & 0xffu), 5);
    assert_int_equal(gs_mig_card_starts(&c, p4, &mask), 0);
    assert_int_equal(gs_mig_card_starts(&c, p3, &mask), 0);
    assert_int_equal(mask, 0);
    assert_int_equal(gs_mig_card_create(&c, p4, 0, &d), -EBUSY);
    assert_has(d.msg, "4g.40gb@0 needs memory slices 0-3; 1g.10gb@0 holds some");
    assert_int_equal(gs_mig_card_create(&c, p3, 4, &d), -EBUSY);
    assert_has(d.msg, "1g.10gb@5");
    assert_int_equal(gs_mig_card_create(&c, p3, 2, &d), -EINVAL);
    assert_has(d.msg, "placements {0,4}:4");
    assert_int_equal(gs_mig_card_best_start(&c, p3, &s), -ENOSPC);
    assert_int_equal(gs_mig_card_score(&c, p4, &score), -ENOSPC);
    assert_int_equal(gs_mig_card_place(&c, p3, &s, &d), -ENOSPC);
    assert_has(d.msg, "3g.40gb fits nowhere on this A100-SXM4-80GB");
    /* what still fits: 2g.20gb at 2 only, 1g.20gb at 2 or 6 */
    assert_int_equal(gs_mig_card_starts(&c, prof(m, "2g.20gb"), &mask), 1);
    assert_int_equal(mask, 1u << 2);
    assert_int_equal(gs_mig_card_starts(&c, prof(m, "1g.20gb"), &mask), 2);
    assert_int_equal(mask, (1u << 2) | (1u << 6));
}

/*
 * Best fit on an empty A100-80GB. A 1g.10gb goes to slot 6: every NVIDIA layout that holds a
 * 4g.40gb (0-3), a 3g.40gb at 0, or three 2g.20gb (0, 2, 4) leaves slot 6 over, so taking it
 * blocks nothing but the 1g.20gb and 3g.40gb that would start at 6 or 4. Placeability 19 -> 15
 * (slot 4 or 5 would leave 14, as they block the 3g at 4 and the 2g at 4; slots 0-3 leave 13).
 */
static void test_best_fit_choices(void **state)
{
    (void)state;
    struct gs_mig_card c;
    int m = model("A100-SXM4-80GB"), s, order[7];
    const int want[7] = {6, 4, 5, 0, 1, 2, 3};
    assert_int_equal(gs_mig_card_init(&c, m, GS_MIG_ALLOW_ALL), 0);
    assert_int_equal(gs_mig_card_placeable(&c), 7 + 1 + 4 + 3 + 2 + 1 + 1);
    assert_int_equal(gs_mig_card_best_start(&c, prof(m, "1g.10gb"), &s), 0);
    assert_int_equal(s, 6);
    for (int i = 0; i < 7; i++)
        assert_int_equal(gs_mig_card_place(&c, prof(m, "1g.10gb"), &order[i], NULL), 0);
    assert_memory_equal(order, want, sizeof(want));
    assert_int_equal(gs_mig_card_placeable(&c), 0);
    /* the larger profiles keep the 4g.40gb possible: 3g.40gb and 2g.20gb start at 4 */
    assert_int_equal(gs_mig_card_init(&c, m, GS_MIG_ALLOW_ALL), 0);
    assert_int_equal(gs_mig_card_best_start(&c, prof(m, "3g.40gb"), &s), 0);
    assert_int_equal(s, 4);
    assert_int_equal(gs_mig_card_best_start(&c, prof(m, "2g.20gb"), &s), 0);
    assert_int_equal(s, 4);
    assert_int_equal(gs_mig_card_best_start(&c, prof(m, "1g.20gb"), &s), 0);
    assert_int_equal(s, 6);
    assert_int_equal(gs_mig_card_best_start(&c, prof(m, "4g.40gb"), &s), 0);
    assert_int_equal(s, 0);
    /* the same under the seed policy's profiles: 1g.10gb, 2g.20gb, 4g.40gb, 7g.80gb */
    unsigned seed = 1u << prof(m, "1g.10gb") | 1u << prof(m, "2g.20gb") | 1u << prof(m, "4g.40gb") |
                    1u << prof(m, "7g.80gb");
    assert_int_equal(gs_mig_card_init(&c, m, seed), 0);
    assert_int_equal(gs_mig_card_placeable(&c), 7 + 3 + 1 + 1);
    assert_int_equal(gs_mig_card_best_start(&c, prof(m, "1g.10gb"), &s), 0);
    assert_int_equal(s, 6);
}

/* Scores: a card in MIG mode beats a whole card; among them, the one hurt least wins. */
static void test_score_across_cards(void **state)
{
    (void)state;
    const int at6[] = {6}, at0[] = {0};
    int m = model("A100-SXM4-80GB"), p1 = prof(m, "1g.10gb"), whole, used, emptied, bad;
    struct gs_mig_card w, u = card_with("A100-SXM4-80GB", "1g.10gb", at6, 1), e = u;
    struct gs_mig_card b = card_with("A100-SXM4-80GB", "4g.40gb", at0, 1);
    assert_int_equal(gs_mig_card_init(&w, m, GS_MIG_ALLOW_ALL), 0);
    assert_int_equal(gs_mig_card_destroy(&e, 6, NULL), 0); /* MIG mode on, nothing left */
    assert_int_equal(gs_mig_card_score(&w, p1, &whole), 0);
    assert_int_equal(gs_mig_card_score(&u, p1, &used), 0);
    assert_int_equal(gs_mig_card_score(&e, p1, &emptied), 0);
    assert_int_equal(gs_mig_card_score(&b, p1, &bad), 0);
    assert_int_equal(whole, 499 * (19 - 4) / 19);      /* 19 -> 15 at slot 6 */
    assert_int_equal(used, 500 + 499 * (19 - 3) / 19); /* 15 -> 12 at slot 4 */
    assert_int_equal(emptied, 500 + 499 * (19 - 4) / 19);
    assert_int_equal(bad, 500 + 499 * (19 - 3) / 19); /* 8 -> 5 at slot 6 */
    assert_true(whole < 500 && emptied < used);
    /* a MIG card that loses much still beats converting a whole card */
    const int at45[] = {4, 5};
    struct gs_mig_card h = card_with("A100-SXM4-80GB", "1g.10gb", at45, 2);
    int hurt;
    assert_int_equal(gs_mig_card_score(&h, prof(m, "3g.40gb"), &hurt), 0);
    assert_true(hurt >= 500 && hurt > whole);
}

/* Destroy frees the slices; the same instance can be made again; MIG mode stays on. */
static void test_destroy_and_recreate(void **state)
{
    (void)state;
    struct gs_mig_card c;
    struct gs_diag d;
    int m = model("H100-SXM5-80GB"), p1 = prof(m, "1g.10gb"), p4 = prof(m, "4g.40gb");
    char list[GS_MIG_LIST_MAX];
    gs_diag_init(&d);
    assert_int_equal(gs_mig_card_init(&c, m, GS_MIG_ALLOW_ALL), 0);
    assert_false(c.mig_mode);
    assert_int_equal(gs_mig_card_create(&c, p1, 3, NULL), 0);
    assert_int_equal(gs_mig_card_create(&c, p1, 0, NULL), 0);
    assert_int_equal(gs_mig_card_create(&c, prof(m, "3g.40gb"), 4, NULL), 0);
    assert_int_equal(gs_mig_card_list(&c, list, sizeof(list)), 29);
    assert_string_equal(list, "1g.10gb@0,1g.10gb@3,3g.40gb@4");
    assert_int_equal(gs_mig_card_create(&c, p4, 0, &d), -EBUSY);
    assert_int_equal(gs_mig_card_set_mode(&c, false), -EBUSY);
    assert_int_equal(gs_mig_card_destroy(&c, 3, NULL), 0);
    assert_int_equal(gs_mig_card_destroy(&c, 3, &d), -ENOENT);
    assert_has(d.msg, "no MIG instance starts at memory slice 3");
    assert_int_equal(gs_mig_card_create(&c, p1, 3, NULL), 0); /* re-created where it was */
    assert_int_equal(gs_mig_card_destroy(&c, 0, NULL), 0);
    assert_int_equal(gs_mig_card_destroy(&c, 3, NULL), 0);
    assert_int_equal(gs_mig_card_create(&c, p4, 0, NULL), 0); /* 0-3 are free again */
    assert_int_equal(gs_mig_card_list(&c, list, sizeof(list)), 19);
    assert_string_equal(list, "4g.40gb@0,3g.40gb@4");
    assert_int_equal(gs_mig_card_list(&c, list, 5), -ENOSPC);
    assert_string_equal(list, "4g.40gb@0,3g.40gb@4");
    assert_int_equal(gs_mig_card_destroy(&c, 0, NULL), 0);
    assert_int_equal(gs_mig_card_destroy(&c, 4, NULL), 0);
    assert_true(c.mig_mode && c.ninst == 0 && c.used == 0);
    assert_int_equal(gs_mig_card_set_mode(&c, false), 0);
}

/* Pods ask "nvidia.com/mig-<profile>: 1"; the name maps to a profile of the card's model. */
static void test_resource_names(void **state)
{
    (void)state;
    struct gs_diag d;
    char buf[GS_MIG_RESOURCE_MAX];
    int a80 = model("A100-SXM4-80GB"), a30 = model("A30");
    gs_diag_init(&d);
    assert_int_equal(gs_mig_resource_parse(a80, "nvidia.com/mig-1g.10gb", &d),
                     prof(a80, "1g.10gb"));
    assert_int_equal(gs_mig_resource_parse(a80, "nvidia.com/mig-1g.10gb.me", &d),
                     prof(a80, "1g.10gb+me"));
    assert_int_equal(gs_mig_resource_parse(a80, "nvidia.com/mig-7g.80gb", &d),
                     prof(a80, "7g.80gb"));
    assert_int_equal(gs_mig_resource_parse(a80, "nvidia.com/mig-1g.5gb", &d), -ENOENT);
    assert_has(d.msg, "A100-SXM4-80GB has no MIG profile \"1g.5gb\" (it has 1g.10gb, 1g.10gb+me, "
                      "1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb); it is a profile of "
                      "A100-SXM4-40GB");
    assert_int_equal(gs_mig_resource_parse(a30, "nvidia.com/mig-3g.40gb", &d), -ENOENT);
    assert_has(d.msg, "A30 has no MIG profile \"3g.40gb\"");
    assert_has(d.msg, "A100-SXM4-80GB, H100-SXM5-80GB");
    assert_int_equal(gs_mig_resource_parse(a80, "nvidia.com/mig-1g.10gb+me", &d), -EINVAL);
    assert_has(d.msg, "cannot hold '+'");
    assert_int_equal(gs_mig_resource_parse(a80, "nvidia.com/gpu", &d), -EINVAL);
    assert_has(d.msg, "nvidia.com/gpu is not a MIG resource name");
    assert_int_equal(gs_mig_resource_parse(a80, "nvidia.com/mig-", &d), -EINVAL);
    assert_int_equal(gs_mig_resource_parse(a80, "nvidia.com/mig-1G.10GB", &d), -ENOENT);
    assert_int_equal(gs_mig_resource_parse(a80, "nvidia.com/mig-1g.10gb\n", &d), -ENOENT);
    assert_has(d.msg, "\"1g.10gb\\x0a\""); /* a control byte is written, not echoed */
    assert_int_equal(gs_mig_resource_parse(a80, NULL, &d), -EINVAL);
    assert_int_equal(gs_mig_resource_parse(99, "nvidia.com/mig-1g.10gb", &d), -EINVAL);
    assert_int_equal(gs_mig_resource_parse(a80, "nvidia.com/mig-1g.10gb", NULL), 0);
    /* every profile of every model survives the round trip */
    for (int m = 0; m < gs_mig_model_count(); m++)
        for (int p = 0; p < gs_mig_model_at(m)->nprofiles; p++) {
            assert_true(gs_mig_resource_name(m, p, buf, sizeof(buf)) > 0);
            assert_null(strchr(buf, '+'));
            assert_int_equal(gs_mig_resource_parse(m, buf, NULL), p);
        }
    assert_int_equal(gs_mig_resource_name(a80, prof(a80, "1g.10gb+me"), buf, sizeof(buf)), 25);
    assert_string_equal(buf, "nvidia.com/mig-1g.10gb.me");
    assert_int_equal(gs_mig_resource_name(a80, 0, buf, 10), -ENOSPC);
    assert_int_equal(gs_mig_resource_name(a80, 7, buf, sizeof(buf)), -EINVAL);
}

/* Models by catalog name or alias; profiles by NVIDIA's exact spelling. */
static void test_find(void **state)
{
    (void)state;
    char buf[24];
    int a80 = model("A100-SXM4-80GB");
    assert_int_equal(gs_mig_model_find("a100-80gb"), a80);
    assert_int_equal(gs_mig_model_find("H100-80GB-HBM3"), model("H100-SXM5-80GB"));
    assert_int_equal(gs_mig_model_find("H200-141GB"), model("H200"));
    assert_int_equal(gs_mig_model_find("A30-24GB"), model("A30"));
    assert_int_equal(gs_mig_model_find("T4"), -EOPNOTSUPP);
    assert_int_equal(gs_mig_model_find("K80"), -ENOENT);
    assert_int_equal(gs_mig_model_find(NULL), -ENOENT);
    assert_int_equal(gs_mig_profile_find(a80, "3g.40gb", -1), 4);
    assert_int_equal(gs_mig_profile_find(a80, "3g.40gbXYZ", 7), 4);
    assert_int_equal(gs_mig_profile_find(a80, "3G.40GB", -1), -ENOENT);
    assert_int_equal(gs_mig_profile_find(a80, "MIG 3g.40gb", -1), -ENOENT);
    assert_int_equal(gs_mig_profile_find(a80, "", -1), -ENOENT);
    assert_int_equal(gs_mig_profile_find(a80, "3g.20gb", -1), -ENOENT);
    assert_int_equal(gs_mig_profile_find(a80, NULL, -1), -EINVAL);
    assert_int_equal(gs_mig_profile_find(-1, "3g.40gb", -1), -EINVAL);
    assert_int_equal(gs_mig_profile_placements(a80, 0, buf, sizeof(buf)), 17);
    assert_string_equal(buf, "{0,1,2,3,4,5,6}:1");
    assert_int_equal(gs_mig_profile_placements(a80, 0, buf, 17), -ENOSPC);
    assert_int_equal(gs_mig_profile_placements(a80, 9, buf, sizeof(buf)), -EINVAL);
    assert_int_equal(gs_mig_profile_names(model("A30"), buf, sizeof(buf)), 23); /* cut to fit */
    assert_string_equal(buf, "1g.6gb, 1g.6gb+me, 2g.1");
}

/* The counting rules: max_instances, the one OFA, the policy's allowed profiles. */
static void test_count_rules(void **state)
{
    (void)state;
    struct gs_mig_card c;
    struct gs_diag d;
    int a30 = model("A30"), me1 = prof(a30, "1g.6gb+me"), me2 = prof(a30, "2g.12gb+me"), s;
    unsigned mask;
    gs_diag_init(&d);
    assert_int_equal(gs_mig_card_init(&c, a30, GS_MIG_ALLOW_ALL), 0);
    assert_int_equal(gs_mig_card_create(&c, me1, 0, NULL), 0);
    assert_int_equal(gs_mig_card_create(&c, me1, 1, &d), -ENOSPC);
    assert_int_equal(gs_mig_card_create(&c, me2, 2, &d), -ENOSPC); /* the OFA is taken */
    assert_has(d.msg, "2g.12gb+me needs the card's only OFA");
    assert_int_equal(gs_mig_card_starts(&c, me2, &mask), 0);
    assert_int_equal(gs_mig_card_create(&c, prof(a30, "2g.12gb"), 2, NULL), 0);
    assert_int_equal(gs_mig_card_create(&c, prof(a30, "1g.6gb"), 1, NULL), 0);
    assert_int_equal(gs_mig_card_placeable(&c), 0);
    /* policy: 3g.40gb not allowed on this card */
    int a80 = model("A100-SXM4-80GB"), p3 = prof(a80, "3g.40gb");
    assert_int_equal(gs_mig_card_init(&c, a80, GS_MIG_ALLOW_ALL & ~(1u << p3)), 0);
    assert_int_equal(gs_mig_card_create(&c, p3, 0, &d), -EPERM);
    assert_has(d.msg, "3g.40gb is not allowed on this A100-SXM4-80GB");
    assert_int_equal(gs_mig_card_starts(&c, p3, &mask), 0);
    assert_int_equal(gs_mig_card_best_start(&c, p3, &s), -ENOSPC);
    assert_int_equal(gs_mig_card_init(&c, a80, 0x80u), -EINVAL); /* no profile left */
    assert_int_equal(gs_mig_card_init(&c, 17, GS_MIG_ALLOW_ALL), -EINVAL);
    assert_int_equal(gs_mig_card_starts(&c, 9, &mask), -EINVAL);
    assert_int_equal(gs_mig_card_create(&c, -1, 0, &d), -EINVAL);
    assert_int_equal(gs_mig_card_create(&c, prof(a80, "1g.10gb"), 7, &d), -EINVAL);
    assert_int_equal(gs_mig_card_create(&c, prof(a80, "1g.10gb"), -1, &d), -EINVAL);
    assert_int_equal(gs_mig_card_create(&c, prof(a80, "1g.10gb"), 99, &d), -EINVAL);
}

/* check_card() - what any reachable card state keeps. */
static void check_card(const struct gs_mig_card *c)
{
    const struct gs_mig_model *m = gs_mig_model_at(c->model);
    const struct gs_gpu_model *cat = gs_catalog_at(gs_catalog_find(m->name, -1));
    unsigned used = 0;
    int compute = 0, ofa = 0;
    uint64_t mib = 0;
    assert_true(c->ninst <= GS_MIG_INSTANCES_MAX);
    for (int i = 0; i < c->ninst; i++) {
        const struct gs_mig_profile *p = &m->profiles[c->inst[i].profile];
        unsigned span = ((1u << p->memory_slices) - 1u) << c->inst[i].start;
        assert_int_equal(used & span, 0);
        assert_true(p->starts & (1u << c->inst[i].start));
        assert_true(i == 0 || c->inst[i - 1].start < c->inst[i].start);
        used |= span;
        compute += p->compute_slices;
        ofa += p->ofa;
        mib += p->memory_mib;
    }
    assert_int_equal(used, c->used);
    assert_true(compute <= m->compute_slices); /* implied by the memory slices, as claimed */
    assert_true(ofa <= 1 && mib <= cat->memory_mib);
}

/* Every set of instances a card can reach, built by trying every placement in turn. */
static int explore(struct gs_mig_card *c, int from)
{
    const struct gs_mig_model *m = gs_mig_model_at(c->model);
    int states = 1;
    check_card(c);
    for (int k = from; k < m->nprofiles * GS_MIG_SLOTS_MAX; k++) {
        int p = k / GS_MIG_SLOTS_MAX, s = k % GS_MIG_SLOTS_MAX;
        unsigned mask;
        gs_mig_card_starts(c, p, &mask);
        int rc = gs_mig_card_create(c, p, s, NULL);
        assert_int_equal(rc == 0, (mask >> s) & 1u); /* starts() says exactly what create does */
        if (rc)
            continue;
        states += explore(c, k);
        assert_int_equal(gs_mig_card_destroy(c, s, NULL), 0);
    }
    return states;
}

static void test_every_geometry(void **state)
{
    (void)state;
    int total = 0;
    for (int m = 0; m < gs_mig_model_count(); m++) {
        struct gs_mig_card c;
        assert_int_equal(gs_mig_card_init(&c, m, GS_MIG_ALLOW_ALL), 0);
        int n = explore(&c, 0);
        assert_true(n > 1 && c.ninst == 0 && c.used == 0);
        total += n;
    }
    assert_true(total > 1000);
}

/* Random creates, places and destroys keep every invariant; same seed, same cards. */
static void test_random_walk(void **state)
{
    (void)state;
    struct gs_rng r;
    gs_rng_seed(&r, 42);
    for (int m = 0; m < gs_mig_model_count(); m++) {
        struct gs_mig_card c;
        int np = gs_mig_model_at(m)->nprofiles;
        assert_int_equal(gs_mig_card_init(&c, m, GS_MIG_ALLOW_ALL), 0);
        for (int step = 0; step < 5000; step++) {
            int p = (int)gs_rng_below(&r, (uint64_t)np), s;
            uint64_t what = gs_rng_below(&r, 3);
            if (what == 0)
                gs_mig_card_create(&c, p, (int)gs_rng_below(&r, 9), NULL);
            else if (what == 1)
                gs_mig_card_place(&c, p, &s, NULL);
            else
                gs_mig_card_destroy(&c, (int)gs_rng_below(&r, 8), NULL);
            check_card(&c);
        }
    }
}

/* The seed's policy: strategy mixed, the A100-SXM4-80GB allowing four profiles. */
static void test_policy_seed(void **state)
{
    (void)state;
    struct gs_mig_policy pol;
    struct gs_mig_card c;
    struct gs_diag d;
    int a80 = model("A100-SXM4-80GB"), s;
    gs_diag_init(&d);
    assert_int_equal(gs_migpolicy_load(SEED, &pol, &d), 0);
    assert_int_equal(pol.strategy, GS_MIG_STRATEGY_MIXED);
    assert_int_equal(pol.ndevices, 1);
    const struct gs_mig_policy_device *dev = gs_migpolicy_device(&pol, a80);
    assert_non_null(dev);
    assert_true(dev->mig_enabled);
    assert_int_equal(dev->allowed, 1u << prof(a80, "1g.10gb") | 1u << prof(a80, "2g.20gb") |
                                       1u << prof(a80, "4g.40gb") | 1u << prof(a80, "7g.80gb"));
    assert_int_equal(dev->line, 10);
    assert_int_equal(dev->column, 7);
    assert_null(gs_migpolicy_device(&pol, model("H100-SXM5-80GB")));
    /* a card under it takes the allowed profiles only */
    assert_int_equal(gs_mig_card_init(&c, a80, dev->allowed), 0);
    assert_int_equal(gs_mig_card_place(&c, prof(a80, "4g.40gb"), &s, NULL), 0);
    assert_int_equal(gs_mig_card_create(&c, prof(a80, "3g.40gb"), 4, &d), -EPERM);
    assert_int_equal(gs_mig_card_place(&c, prof(a80, "2g.20gb"), &s, NULL), 0);
    assert_int_equal(s, 4);
}

/* load_variant() - the seed with @from replaced by @to (or @text itself when @from is NULL),
 * loaded from a temporary file; the message into @d, "PATH" standing for the file's name. */
static int load_variant(const char *from, const char *to, struct gs_mig_policy *pol,
                        struct gs_diag *d)
{
    char text[8192], path[32] = "/tmp/gs_test_mig_XXXXXX", *seed = t_slurp(SEED, NULL), *at;
    assert_non_null(seed);
    if (from && (at = strstr(seed, from)))
        snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - seed), seed, to, at + strlen(from));
    else
        snprintf(text, sizeof(text), "%s", from ? "(variant not found)" : to);
    free(seed);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(close(fd), 0);
    gs_diag_init(d);
    int rc = gs_migpolicy_load(path, pol, d);
    unlink(path);
    char msg[GS_DIAG_MSG_MAX], *p = strstr(d->msg, path);
    if (p) { /* make the message independent of the temporary name */
        snprintf(msg, sizeof(msg), "%.*sPATH%s", (int)(p - d->msg), d->msg, p + strlen(path));
        snprintf(d->msg, sizeof(d->msg), "%s", msg);
    }
    return rc;
}

/* Bad policies: each error names file:line:column and the offending value. */
static void test_policy_errors(void **state)
{
    (void)state;
    struct gs_mig_policy pol;
    struct gs_diag d;
    static const struct {
        const char *from, *to, *msg;
    } bad[] = {
        {"- 2g.20gb", "- 3g.20gb",
         "PATH:14:11: A100-SXM4-80GB has no MIG profile \"3g.20gb\" (it has 1g.10gb, "
         "1g.10gb+me, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb)"},
        {"- 7g.80gb", "- 1g.10gb", "PATH:16:11: MIG profile \"1g.10gb\" is listed twice"},
        {"name: A100-SXM4-80GB", "name: A100-SXM4-60GB", "PATH:10:13: unknown GPU model"},
        {"name: A100-SXM4-80GB", "name: T4", "PATH:10:13: GPU model \"T4\" has no MIG"},
        {"migProfiles:", "migProfile:", "PATH:12:7: unknown field \"migProfile\" in a device"},
        {"strategy: mixed", "strategy: mixd",
         "PATH:8:15: spec.mig.strategy must be none, single or mixed, not \"mixd\""},
        {"migEnabled: true", "migEnabled: yes", "PATH:11:19: migEnabled must be true or false"},
        {"migEnabled: true", "migEnabled: \"true\"", "migEnabled must be true or false"},
        {"migEnabled: true", "migEnabled: false", "PATH:12:7: migProfiles given for"},
        {"kind: GpuClusterPolicy", "kind: ClusterPolicy",
         "PATH:3:7: kind must be \"GpuClusterPolicy\", not \"ClusterPolicy\""},
        {"apiVersion: nvidia.com/v1\n", "", "PATH:2:1: missing field \"apiVersion\""},
        {"strategy: mixed", "strategy: single",
         "PATH:10:7: strategy single advertises every MIG device as nvidia.com/gpu"},
        {"migProfiles:\n        - 1g.10gb\n        - 2g.20gb\n        - 4g.40gb\n        - 7g.80gb",
         "migProfiles: []", "PATH:12:7: migProfiles of A100-SXM4-80GB is empty"},
        {"  name: gpu-cluster-policy", "  name: &n gpu-cluster-policy\n  labels: *n",
         "PATH:6:11: YAML aliases are not accepted"},
        /* metadata holds what Kubernetes' ObjectMeta does, nothing else */
        {"  name: gpu-cluster-policy", "  name: gpu-cluster-policy\n  namespaec: x",
         "PATH:6:3: unknown field \"namespaec\" in metadata"},
        {"      migEnabled: true", "      migEnabled: true\n    - name: A100-80GB",
         "PATH:12:13: device A100-SXM4-80GB is listed twice (first at line 10)"},
        {"kind: GpuClusterPolicy", "kind: GpuClusterPolicy\n- x",
         "PATH:4:1: YAML error: did not find expected key"},
        {"spec:", "spec: 1\nx:", "PATH:6:7: spec must be a mapping, not a scalar"},
        {"kind: GpuClusterPolicy", "kind: GpuClusterPolicy\nkind: GpuClusterPolicy",
         "PATH:4:1: duplicate field \"kind\" in GpuClusterPolicy"},
        {"  devices:", "  devices: {}\n  x:", "PATH:9:12: spec.devices must be a sequence"},
        {"7g.80gb\n", "7g.80gb\n---\nkind: x\n", "PATH:17:1: a second YAML document"},
        {"  name: gpu-cluster-policy",
         "  name: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
         "[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
         "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
         "nested deeper than 64 levels"},
        {NULL, "", "PATH: empty file"},
        {NULL, "apiVersion: nvidia.com/v1\nkind: \xff\n",
         "PATH:2:7: YAML error: invalid leading UTF-8 octet"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = load_variant(bad[i].from, bad[i].to, &pol, &d);
        if (rc != -EINVAL)
            print_error("case %zu: rc %d, message: %s\n", i, rc, d.msg);
        assert_int_equal(rc, -EINVAL);
        assert_has(d.msg, bad[i].msg);
    }
}

/* Accepted shapes: defaults, MIG off, single strategy with one profile, every profile. */
static void test_policy_variants(void **state)
{
    (void)state;
    struct gs_mig_policy pol, before;
    struct gs_diag d;
    /* no spec.mig: strategy single, the GPU Operator's default, so four profiles are refused */
    assert_int_equal(load_variant("  mig:\n    strategy: mixed\n", "", &pol, &d), -EINVAL);
    assert_has(d.msg, "strategy single advertises");
    assert_int_equal(load_variant("      migProfiles:\n        - 1g.10gb\n        - 2g.20gb\n"
                                  "        - 4g.40gb\n        - 7g.80gb\n",
                                  "", &pol, &d),
                     0);
    assert_int_equal(pol.devices[0].allowed, 0x7fu); /* no list: every profile */
    assert_int_equal(
        load_variant("      migEnabled: true\n      migProfiles:\n        - 1g.10gb\n        - "
                     "2g.20gb\n        - 4g.40gb\n        - 7g.80gb\n",
                     "      migEnabled: false\n    - name: H100-80GB-HBM3\n      migEnabled: "
                     "true\n      migProfiles: [1g.10gb+me]\n",
                     &pol, &d),
        0);
    assert_int_equal(pol.ndevices, 2);
    assert_false(pol.devices[0].mig_enabled);
    assert_int_equal(pol.devices[0].allowed, 0);
    assert_int_equal(pol.devices[1].model, model("H100-SXM5-80GB"));
    assert_int_equal(pol.devices[1].allowed, 1u << 1);
    /* strategy single with one profile a device */
    assert_int_equal(
        load_variant("  mig:\n    strategy: mixed\n", "  mig: {strategy: single}\n", &pol, &d),
        -EINVAL);
    assert_int_equal(load_variant("strategy: mixed\n  devices:\n    - name: A100-SXM4-80GB\n"
                                  "      migEnabled: true\n      migProfiles:\n        - 1g.10gb\n"
                                  "        - 2g.20gb\n        - 4g.40gb\n",
                                  "strategy: single\n  devices:\n    - name: A100-SXM4-80GB\n"
                                  "      migEnabled: true\n      migProfiles:\n",
                                  &pol, &d),
                     0);
    assert_int_equal(pol.strategy, GS_MIG_STRATEGY_SINGLE);
    assert_int_equal(pol.devices[0].allowed, 1u << 6); /* 7g.80gb */
    memset(&before, 0x5a, sizeof(before));
    pol = before;
    assert_int_equal(gs_migpolicy_load("tests/data/no-such-policy.yaml", &pol, &d), -ENOENT);
    assert_has(d.msg, "no such file");
    assert_int_equal(gs_migpolicy_load("tests/data", &pol, &d), -EINVAL); /* a directory */
    assert_memory_equal(&pol, &before, sizeof(pol));                      /* untouched on failure */
    assert_int_equal(gs_migpolicy_load(NULL, &pol, &d), -EINVAL);
    /* a file over the size limit is refused before it is parsed */
    char big[32] = "/tmp/gs_test_mig_XXXXXX";
    int fd = mkstemp(big);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)GS_CONFIG_MAX_BYTES + 1), 0);
    assert_int_equal(close(fd), 0);
    assert_int_equal(gs_migpolicy_load(big, &pol, &d), -EINVAL);
    assert_has(d.msg, "larger than");
    unlink(big);
    assert_memory_equal(&pol, &before, sizeof(pol));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_equals_csv),
        cmocka_unit_test(test_table_invariants),
        cmocka_unit_test(test_placements_equal_lgipp),
        cmocka_unit_test(test_profiles_equal_lgip),
        cmocka_unit_test(test_every_placement),
        cmocka_unit_test(test_best_fit_matches_driver),
        cmocka_unit_test(test_fragmented_a100),
        cmocka_unit_test(test_best_fit_choices),
        cmocka_unit_test(test_score_across_cards),
        cmocka_unit_test(test_destroy_and_recreate),
        cmocka_unit_test(test_resource_names),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_count_rules),
        cmocka_unit_test(test_every_geometry),
        cmocka_unit_test(test_random_walk),
        cmocka_unit_test(test_policy_seed),
        cmocka_unit_test(test_policy_errors),
        cmocka_unit_test(test_policy_variants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
