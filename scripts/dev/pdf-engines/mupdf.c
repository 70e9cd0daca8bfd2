// MuPDF through inkyfs's own C (Sources/CInkyPDF): open, classify every page
// (embedded image or render), read embedded images' bytes, render pages to PNG at 2,700 px.
#include "../../Sources/CInkyPDF/include/inky_pdf.h"
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
int main(int argc, char **argv) {
    char err[512]; inky_pdf *pdf; int count;
    double t0 = now();
    int rc = inky_pdf_open(argv[1], 64 << 20, &pdf, err, sizeof err);
    if (rc) { printf("mupdf %s: open failed (%d): %s\n", argv[1], rc, err); return 1; }
    inky_pdf_page_count(pdf, &count, err, sizeof err);
    double t1 = now();
    int kinds[4] = {0}, objects[4096]; int images = 0;
    for (int i = 0; i < count; i++) {
        inky_pdf_page info;
        if (inky_pdf_probe_page(pdf, i, &info, err, sizeof err)) { printf("probe %d: %s\n", i, err); continue; }
        kinds[info.kind]++;
        if (info.kind && images < 4096) objects[images++] = info.object;
    }
    double t2 = now();
    for (int i = 0; i < images; i++) {
        unsigned char *data; size_t len;
        if (!inky_pdf_raw_stream(pdf, objects[i], &data, &len, err, sizeof err)) free(data);
    }
    double t3 = now();
    int renders = argc > 2 ? atoi(argv[2]) : 3; if (renders > count) renders = count;
    size_t total = 0;
    for (int i = 0; i < renders; i++) {
        unsigned char *data; size_t len;
        if (inky_pdf_render_png(pdf, i, 2700, 0, 64000000, &data, &len, err, sizeof err)) { printf("render %d: %s\n", i, err); continue; }
        total += len;
        if (i == 0 && argc > 3) { FILE *f = fopen(argv[3], "wb"); fwrite(data, 1, len, f); fclose(f); }
        free(data);
    }
    double t4 = now();
    struct rusage ru; getrusage(RUSAGE_SELF, &ru);
    printf("mupdf   %s: %d pages, open %.1f ms, classify %.2f ms/page (%d embedded, %d to render), embedded bytes %.2f ms/page, "
           "render %.0f ms/page (PNG %zu bytes avg), max RSS %ld MB\n",
        argv[1], count, (t1 - t0) * 1e3, (t2 - t1) * 1e3 / count, kinds[1] + kinds[2] + kinds[3], kinds[0],
        images ? (t3 - t2) * 1e3 / images : 0, renders ? (t4 - t3) * 1e3 / renders : 0, renders ? total / renders : 0, ru.ru_maxrss / 1024);
    inky_pdf_close(pdf);
    return 0;
}
