/*
 * gpuschedd: GET /ui, the report's views of the running daemon (docs/report.md, "Live in
 * gpuschedd"). The page is the report's (gpusched/page.h) with data/report/ui.js and no data of
 * any kind: it asks for a bearer token and fetches everything from the API with it, so what it
 * shows is what the API shows that token. It needs no credentials itself, as GET /healthz does.
 */
#ifndef GSD_UI_H
#define GSD_UI_H

struct gsd_req;

/* gsd_ui_path() - whether @path is the page's (/ui or /ui/). */
int gsd_ui_path(const char *path);

/*
 * gsd_ui_answer() - answer @r when it asks for the page: 200 with the page (GET, HEAD), made
 * once on the first call from gs_data_file("report") and Debian's Chart.js; 503 naming the missing
 * file when it cannot be made (logged once); 405 for another method. Any thread; the page is
 * shared, never copied. Return: 1 answered, 0 not the page's path.
 */
int gsd_ui_answer(struct gsd_req *r);

#endif
