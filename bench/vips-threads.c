// The in-process floor of bench/images.sh: what `vipsthumbnail --size 512x512 -o %s.jpg[Q=80,strip]`
// does to each photo, on N threads of one process instead of N processes.
//
// Threads of one process share libvips' global locks, its thread pool and the allocator, which
// separate processes do not: this measures what that sharing costs, the limit for any server that
// decodes in-process (feed-server's pack runs its images on threads the same way).
//
// usage: vips-threads THREADS OUTDIR FILE...
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <vips/vips.h>

static char **files;
static int count;
static const char *outdir;
static int next_file = 0;
static pthread_mutex_t next_lock = PTHREAD_MUTEX_INITIALIZER;

static int take_file(void) {
    pthread_mutex_lock(&next_lock);
    int index = next_file++;
    pthread_mutex_unlock(&next_lock);
    return index;
}

static void *run(void *unused) {
    (void)unused;
    for (int index = take_file(); index < count; index = take_file()) {
        VipsImage *thumbnail = NULL;
        char out[4096];
        snprintf(out, sizeof out, "%s/%d.jpg[Q=80,strip]", outdir, index);
        if (vips_thumbnail(files[index], &thumbnail, 512, "height", 512, "size", VIPS_SIZE_DOWN, NULL) != 0 ||
            vips_image_write_to_file(thumbnail, out, NULL) != 0) {
            fprintf(stderr, "vips-threads: %s: %s", files[index], vips_error_buffer());
            exit(1);
        }
        g_object_unref(thumbnail);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 4 || VIPS_INIT(argv[0]) != 0) {
        fprintf(stderr, "usage: vips-threads THREADS OUTDIR FILE...\n");
        return 2;
    }
    int threads = atoi(argv[1]);
    if (threads < 1 || threads > 64) threads = 1;
    outdir = argv[2];
    files = argv + 3;
    count = argc - 3;
    pthread_t workers[64];
    for (int i = 0; i < threads; i++) pthread_create(&workers[i], NULL, run, NULL);
    for (int i = 0; i < threads; i++) pthread_join(workers[i], NULL);
    return 0;
}
